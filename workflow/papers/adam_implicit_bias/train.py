"""Run a group of optimisers on one data set, each from w_0 = 0, and save their iterates at log-spaced steps.

The group (the data set's family plan, or the batch-size sweep) and its algorithms come from the paper's plan.
Each run is deterministic and independent of the others, so a group gives the same numbers as one job per run.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, write_npz
from workflow.core.step import Step

from . import methods, plan

READS = ("adam_implicit_bias.train", "adam_implicit_bias.algorithms", "adam_implicit_bias.plan")


def direction_metrics(W: np.ndarray, data: dict) -> dict[str, np.ndarray]:
    """Per recorded iterate: cosine to w_2, w_inf, w_fp and the normalised margin ratios r_2, r_inf."""
    out = {name: np.array([methods.cosine(w, data[ref]) for w in W])
           for name, ref in (("cos_w2", "w2"), ("cos_winf", "winf"), ("cos_wfp", "wfp"))}
    ratios = [methods.margin_ratios(w, data["X"], data["y"], float(data["gamma2"]), float(data["gamma_inf"])) for w in W]
    out["r2"] = np.array([r["r2"] for r in ratios])
    out["rinf"] = np.array([r["rinf"] for r in ratios])
    return out


def random_rotation(d: int, seed: int) -> np.ndarray:
    """A seeded Haar-random d x d orthogonal matrix (QR of a Gaussian matrix, signs fixed by R's diagonal)."""
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def run(data: dict, p: dict) -> dict:
    """One run: ``p`` = the train section merged with one algorithm's settings (optimizer, batch, beta2, and for the
    placebos ``precond``, or ``rotate_seed``).

    ``rotate_seed`` (C3's placebo): the optimiser runs in a seeded random orthonormal basis Q, i.e. on the data
    X Q (the logits are unchanged, x^T w = (Q^T x)^T (Q^T w)), and its iterates are mapped back by Q: Signum then takes
    the sign of Q^T m instead of m's own coordinates, w <- w - eta_t Q sign(Q^T m), everything else kept."""
    n = len(data["y"])
    batch = n if p["batch"] == 0 else p["batch"]
    record_at = methods.log_steps(p["steps"], p["record_points"])
    X = np.asarray(data["X"], dtype=np.float64)
    Q = random_rotation(X.shape[1], int(p["rotate_seed"])) if "rotate_seed" in p else None
    traj = methods.train(X if Q is None else X @ Q, data["y"], p["optimizer"], p["steps"], eta0=p["eta0"],
                         beta1=p["beta1"], beta2=p["beta2"], batch=batch, beta=p["signum_beta"], record_at=record_at,
                         precond=p.get("precond", "own"))
    return traj if Q is None else traj | {"w": traj["w"] @ Q.T}


def main(argv=None):
    step = Step("adam_implicit_bias", "train", __doc__)
    step.parser.add_argument("dataset", help="<family><index>, e.g. gr0 or gauss3")
    step.parser.add_argument("--group", choices=plan.GROUPS, required=True, help="which of the data set's runs")
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--out", type=Path, required=True,
                             help=".npz with <algorithm>.steps, <algorithm>.w and its direction metrics per run")
    args, _ = step.start(argv)
    settings, algorithms = step.values["adam_implicit_bias.train"], step.values["adam_implicit_bias.algorithms"]
    names = plan.algorithms(step.values["adam_implicit_bias.plan"], plan.family_and_index(args.dataset)[0], args.group)
    data = read_npz(args.data)
    arrays, metrics, curves = {}, {}, {}
    for name in names:
        traj = run(data, settings | algorithms[name])
        runs = direction_metrics(traj["w"], data)
        arrays |= {f"{name}.{k}": v for k, v in {"steps": traj["steps"], "w": traj["w"], **runs}.items()}
        metrics |= {f"{name}.final_{k}": v[-1] for k, v in runs.items()}
        curves |= {f"{name}.{k}": list(zip(traj["steps"], v)) for k, v in runs.items()}
        step.log(f"{name}: " + " ".join(f"{k} {v[-1]:.4f}" for k, v in runs.items()))
    write_npz(args.out, **arrays)
    step.finish(metrics=metrics, curves=curves, outputs=[args.out])


if __name__ == "__main__":
    main()
