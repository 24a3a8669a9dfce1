"""Claim C4: the Soft QD score's properties on [0,1]^2 by midpoint-grid integration (400 x 400).

* monotone: adding a random solution, or raising one solution's fitness, never decreases S;
* submodular: for random A in B and a new solution x, S(A + x) - S(A) >= S(B + x) - S(B);
* limit: for n well-separated solutions, S_sigma / (2 pi sigma^2)^{m/2} -> sum_n f_n (= the QD score of an archive
  with one elite per cell) as sigma -> 0; the relative error is recorded per configuration and sigma.

Every check is also run, on the same random sets, for a deliberately faulty score (variant "faulty_mean": the mean
over solutions in place of the max), the negative control the checks must catch."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import scores

READS = ("soft_qd.theory",)


VARIANTS = {"soft_qd": "max", "faulty_mean": "mean"}  # variant -> aggregate over solutions in scores.soft_qd_score


def property_trials(p: dict, aggregate: str = "max") -> pd.DataFrame:
    """One row per random trial: the three monotonicity / submodularity margins (>= 0 means the property held)."""
    rng = np.random.default_rng(p["seed"])
    kw = dict(grid_res=p["grid_res"], aggregate=aggregate)
    rows = []
    for t in range(p["trials"]):
        n = int(rng.integers(1, p["max_set"] + 1))
        sigma = float(rng.uniform(*p["sigma_range"]))
        f, b = rng.uniform(0, 100, n), rng.random((n, 2))
        fx, bx = rng.uniform(0, 100), rng.random((1, 2))
        s = scores.soft_qd_score(f, b, sigma, **kw)
        add = scores.soft_qd_score(np.append(f, fx), np.vstack([b, bx]), sigma, **kw) - s
        fi = f.copy()
        fi[rng.integers(n)] += rng.uniform(0, 50)
        improve = scores.soft_qd_score(fi, b, sigma, **kw) - s
        a = rng.random(n) < 0.5  # A = a random subset of B = the whole set
        s_a = scores.soft_qd_score(f[a], b[a], sigma, **kw)
        gain_a = scores.soft_qd_score(np.append(f[a], fx), np.vstack([b[a], bx]), sigma, **kw) - s_a
        rows.append({"trial": t, "n": n, "sigma": sigma, "S": s, "add_gain": add, "improve_gain": improve,
                     "submodular_margin": gain_a - add})
    return pd.DataFrame(rows)


def separated_points(n: int, rng, min_dist: float) -> np.ndarray:
    """n points in [0.05, 0.95]^2 pairwise at least min_dist apart (rejection sampling)."""
    pts = []
    while len(pts) < n:
        q = rng.uniform(0.05, 0.95, 2)
        if all(np.linalg.norm(q - r) >= min_dist for r in pts):
            pts.append(q)
    return np.array(pts)


def limit_table(p: dict, aggregate: str = "max") -> pd.DataFrame:
    """Per configuration and sigma: S / (2 pi sigma^2) against sum f (and the CVT/grid-free QD score = sum f)."""
    rng = np.random.default_rng(p["seed"] + 1)
    rows = []
    for c in range(p["limit_configs"]):
        b = separated_points(p["limit_n"], rng, p["limit_min_dist"])
        f = rng.uniform(10, 100, p["limit_n"])
        for sigma in p["limit_sigmas"]:
            norm = scores.soft_qd_normalized(f, b, sigma, grid_res=p["grid_res"], aggregate=aggregate)
            rows.append({"config": c, "sigma": sigma, "normalized_soft_qd": norm, "qd_score": f.sum(),
                         "rel_error": abs(norm / f.sum() - 1)})
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("soft_qd", "theory", __doc__)
    step.parser.add_argument("--trials", type=Path, required=True, help=".csv, one row per property trial")
    step.parser.add_argument("--limit", type=Path, required=True, help=".csv, one row per configuration and sigma")
    args, p = step.start(argv)
    trials = pd.concat([property_trials(p, agg).assign(variant=v) for v, agg in VARIANTS.items()], ignore_index=True)
    limit = pd.concat([limit_table(p, agg).assign(variant=v) for v, agg in VARIANTS.items()], ignore_index=True)
    write_text(args.trials, trials.to_csv(index=False, float_format="%.10g"))
    write_text(args.limit, limit.to_csv(index=False, float_format="%.10g"))
    ok, lim = trials[trials.variant == "soft_qd"], limit[limit.variant == "soft_qd"]
    finest = lim[lim.sigma == lim.sigma.min()]
    step.finish(metrics={"min_add_gain": ok.add_gain.min(), "min_improve_gain": ok.improve_gain.min(),
                         "min_submodular_margin": ok.submodular_margin.min(),
                         "max_rel_error_finest_sigma": finest.rel_error.max()}, outputs=[args.trials, args.limit])


if __name__ == "__main__":
    main()
