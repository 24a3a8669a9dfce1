"""Generate one data set (GR or Gauss) and its reference directions: w_2, w_inf and the Mahalanobis fixed point w_fp."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_json, write_npz
from workflow.core.step import Step

from . import methods, references
from .plan import family_and_index

READS = ("adam_implicit_bias.data", "adam_implicit_bias.refs")

FAMILIES = {"gr": (references.make_gr, 0), "gauss": (references.make_gauss, 1000)}  # generator, seed offset


def generate(dataset: str, n: int, d: int, seed: int, refs: dict) -> tuple[dict, dict]:
    """The data set's arrays and a JSON summary of its reference solutions."""
    family, k = family_and_index(dataset)
    make, offset = FAMILIES[family]
    rng = np.random.default_rng(seed + offset + k)
    X, y, info = make(rng, n=n, d=d)
    l2, linf = references.l2_max_margin(X, y), references.linf_max_margin(X, y)
    fp = references.mahalanobis_fixed_point(X, y, damping=refs["damping"], tol=refs["tol"], max_iter=refs["max_iter"])
    arrays = dict(X=X, y=y, w2=l2["w"], winf=linf["w"], wfp=fp["w"], p=fp["p"],
                  gamma2=np.float64(l2["gamma"]), gamma_inf=np.float64(linf["gamma"]))
    summary = {"dataset": dataset, "family": family, "rejection_tries": info.get("tries"),
               "gamma2": l2["gamma"], "gamma_inf": linf["gamma"],
               "fp_iterations": fp["iterations"], "fp_converged": fp["converged"],
               "cos_w2_winf": methods.cosine(l2["w"], linf["w"]), "cos_w2_wfp": methods.cosine(l2["w"], fp["w"]),
               "cos_winf_wfp": methods.cosine(linf["w"], fp["w"])}
    return arrays, summary


def main(argv=None):
    step = Step("adam_implicit_bias", "data", __doc__)
    step.parser.add_argument("dataset", help="<family><index>, e.g. gr0 or gauss3")
    step.parser.add_argument("--out", type=Path, required=True, help=".npz with X, y and the reference directions")
    step.parser.add_argument("--summary", type=Path, required=True, help=".json summary of the references")
    args, p = step.start(argv)
    arrays, summary = generate(args.dataset, p["n"], p["d"], p["seed"], {k: p[k] for k in ("damping", "tol", "max_iter")})
    write_npz(args.out, **arrays)
    write_json(args.summary, summary)
    step.finish(metrics={k: v for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
                outputs=[args.out, args.summary])


if __name__ == "__main__":
    main()
