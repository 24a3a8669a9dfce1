"""Run one optimiser on one data set from w_0 = 0 and save its iterates at log-spaced steps."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, write_npz
from workflow.core.step import Step

from . import methods


def direction_metrics(W: np.ndarray, data: dict) -> dict[str, np.ndarray]:
    """Per recorded iterate: cosine to w_2, w_inf, w_fp and the normalised margin ratios r_2, r_inf."""
    out = {name: np.array([methods.cosine(w, data[ref]) for w in W])
           for name, ref in (("cos_w2", "w2"), ("cos_winf", "winf"), ("cos_wfp", "wfp"))}
    ratios = [methods.margin_ratios(w, data["X"], data["y"], float(data["gamma2"]), float(data["gamma_inf"])) for w in W]
    out["r2"] = np.array([r["r2"] for r in ratios])
    out["rinf"] = np.array([r["rinf"] for r in ratios])
    return out


def run(data: dict, p: dict) -> dict:
    n = len(data["y"])
    batch = n if p["batch"] == 0 else p["batch"]
    record_at = methods.log_steps(p["steps"], p["record_points"])
    return methods.train(data["X"], data["y"], p["optimizer"], p["steps"], eta0=p["eta0"], beta1=p["beta1"],
                         beta2=p["beta2"], batch=batch, beta=p["signum_beta"], record_at=record_at)


def main(argv=None):
    step = Step("adam_implicit_bias", "train", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--out", type=Path, required=True, help=".npz with recorded steps and iterates")
    args, p = step.start(argv)
    data = read_npz(args.data)
    traj = run(data, p)
    curves = direction_metrics(traj["w"], data)
    write_npz(args.out, steps=traj["steps"], w=traj["w"], **curves)
    step.finish(metrics={f"final_{k}": v[-1] for k, v in curves.items()},
                curves={k: list(zip(traj["steps"], v)) for k, v in curves.items()}, outputs=[args.out])


if __name__ == "__main__":
    main()
