"""Metrics of every run on the fixed evaluation archives (QD score, coverage, mean fitness, Vendi, quality-weighted
Vendi, the paper's approx Soft QD score), the sigma sweep and the Soft QD property checks -> tables and claims.json.

Units of the claims: a seed (C1-C3; each a paired comparison of methods on the same seed), a random trial or a
configuration (C4). 'Best baseline' is the better of CMA-MAE and MAP-Elites on that seed and metric."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

from . import methods

CLAIMS = Path(__file__).with_name("claims.yaml")
RUN_NAME = re.compile(r"(?P<benchmark>[a-z]+)/m(?P<m>\d+)/(?P<method>[a-z_]+)_s(?P<seed>\d+)\.npz$")
BASELINES = ("cma_mae", "map_elites")
SUBMODULAR_TOL = 1e-9  # relative to S: the grid sum is exactly submodular up to float rounding


def run_metrics(path: Path, centroids: dict[int, np.ndarray], vendi_max_n: int) -> dict:
    """One row of metrics.csv from a run's .npz (its benchmark, m, method, seed come from the path)."""
    match = RUN_NAME.search(path.as_posix())
    if not match:
        raise ValueError(f"{path}: expected runs/<benchmark>/m<m>/<method>_s<seed>.npz")
    key = match.groupdict()
    m, z = int(key["m"]), read_npz(path)
    f, b = z["f"], z["b"]
    qd = methods.qd_score_cvt(f, b, centroids[m])
    vendi = methods.vendi_score(b, max_n=vendi_max_n)
    return {"benchmark": key["benchmark"], "m": m, "method": key["method"], "seed": int(key["seed"]),
            "n_evals": int(z["n_evals"]), "budget": int(z["budget"]), "seconds": float(z["seconds"]),
            "n_solutions": len(f), "qd_score": qd["qd_score"], "coverage": qd["coverage"], "mean_f": f.mean(),
            "max_f": f.max(), "vendi": vendi, "quality_weighted_vendi": vendi * f.mean(),
            "approx_soft_qd": methods.approx_soft_qd_score(f, b)}


def ratio_to_best_baseline(runs: pd.DataFrame, benchmark: str, m: int, metric: str) -> pd.Series:
    """Per seed: SQUAD's metric / the best baseline's (NaN where a method is missing)."""
    d = runs[(runs.benchmark == benchmark) & (runs.m == m)].pivot_table(index="seed", columns="method", values=metric)
    if "squad" not in d or not set(BASELINES) & set(d.columns):
        return pd.Series(dtype=float)
    best = d[[c for c in BASELINES if c in d]].max(axis=1)
    return d["squad"] / best


def diff_to_best_baseline(runs, benchmark, m, metric) -> pd.Series:
    d = runs[(runs.benchmark == benchmark) & (runs.m == m)].pivot_table(index="seed", columns="method", values=metric)
    if "squad" not in d or not set(BASELINES) & set(d.columns):
        return pd.Series(dtype=float)
    return d["squad"] - d[[c for c in BASELINES if c in d]].max(axis=1)


def measure(runs: pd.DataFrame, sweep: pd.DataFrame, trials: pd.DataFrame, limit: pd.DataFrame) -> dict[str, list]:
    """{claim metric: [value per unit]}; metrics a profile does not run are simply absent (-> inconclusive)."""
    out: dict[str, list] = {}

    def put(name, values):
        vals = [float(v) for v in np.asarray(values, dtype=float).ravel() if not np.isnan(v)]
        if vals:
            out[name] = vals

    r4, r16 = (ratio_to_best_baseline(runs, "rastrigin", m, "qd_score") for m in (4, 16))
    put("c1_qd_ratio_m4", r4)
    put("c2_qd_ratio_m16", r16)
    put("c2_vendi_ratio_m16", ratio_to_best_baseline(runs, "rastrigin", 16, "vendi"))
    put("c2_qd_ratio_growth_16_minus_4", (r16 - r4).dropna())
    if len(sweep):
        rho = {s: g[["sigma2", "mean_f", "vendi"]].corr(method="spearman").loc["sigma2"] for s, g in sweep.groupby("seed")}
        put("c3_spearman_fitness_vs_sigma2", [r["mean_f"] for r in rho.values()])
        put("c3_spearman_vendi_vs_sigma2", [r["vendi"] for r in rho.values()])
    tol = SUBMODULAR_TOL * trials.S.abs().clip(lower=1.0)
    put("c4_adding_never_decreases", (trials.add_gain >= -tol).astype(float))
    put("c4_improving_never_decreases", (trials.improve_gain >= -tol).astype(float))
    put("c4_submodular", (trials.submodular_margin >= -tol).astype(float))
    put("c4_limit_rel_error_sigma_0.01", limit[np.isclose(limit.sigma, 0.01)].rel_error)
    put("info_sphere_qd_ratio_m16", ratio_to_best_baseline(runs, "sphere", 16, "qd_score"))
    put("info_sphere_qd_ratio_m4", ratio_to_best_baseline(runs, "sphere", 4, "qd_score"))
    put("info_approx_soft_qd_diff_m16", diff_to_best_baseline(runs, "rastrigin", 16, "approx_soft_qd"))
    return out


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over seeds per benchmark x m x method (the paper's table)."""
    cols = ["qd_score", "coverage", "mean_f", "vendi", "quality_weighted_vendi", "approx_soft_qd", "n_solutions",
            "n_evals", "seconds"]
    g = runs.groupby(["benchmark", "m", "method"])[cols]
    s = g.mean().join(g.std(ddof=1).add_suffix("_std")).join(g.size().rename("seeds"))
    return s.reset_index()


def main(argv=None):
    step = Step("soft_qd", "evaluate", __doc__)
    step.parser.add_argument("--runs", type=Path, nargs="+", required=True, help="runs/<benchmark>/m<m>/<method>_s<seed>.npz")
    step.parser.add_argument("--centroids", type=Path, nargs="+", required=True, help="archives/m<m>.npz")
    step.parser.add_argument("--sweep", type=Path, nargs="+", required=True, help="sweep/s<seed>.csv")
    step.parser.add_argument("--trials", type=Path, required=True)
    step.parser.add_argument("--limit", type=Path, required=True)
    step.parser.add_argument("--metrics", type=Path, required=True, help="per-run metrics (.csv)")
    step.parser.add_argument("--summary", type=Path, required=True, help="mean/std per benchmark x m x method (.csv)")
    step.parser.add_argument("--sweep-table", type=Path, required=True, help="all sweep rows (.csv)")
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    centroids = {int(re.search(r"m(\d+)\.npz$", c.name).group(1)): read_npz(c)["centroids"] for c in args.centroids}
    runs = pd.DataFrame([run_metrics(r, centroids, p["vendi_max_n"]) for r in args.runs])
    sweep = pd.concat([pd.read_csv(s) for s in args.sweep], ignore_index=True)
    trials, limit = pd.read_csv(args.trials), pd.read_csv(args.limit)
    result = claims_mod.check(CLAIMS, measure(runs, sweep, trials, limit), args.profile, args.claims, step.log)
    write_text(args.metrics, runs.to_csv(index=False, float_format="%.6g"))
    write_text(args.summary, summary(runs).to_csv(index=False, float_format="%.6g"))
    write_text(args.sweep_table, sweep.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.summary, args.claims],
                outputs=[args.metrics, args.summary, args.sweep_table, args.claims])


if __name__ == "__main__":
    main()
