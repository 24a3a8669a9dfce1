"""Metrics of every run on the fixed evaluation archives (QD score, coverage, mean fitness, Vendi, quality-weighted
Vendi, the paper's approx Soft QD score), the sigma sweep and the Soft QD property checks -> tables and claims.json.

Units of the claims: a seed (C1-C3; each a paired comparison of methods on the same seed), a random trial or a
configuration (C4). 'Best baseline' is the best of CMA-MAE, CMA-MAEGA and MAP-Elites on that seed and metric.

Controls, measured under the claims' metric names by the same functions (claims.yaml `controls:`):
  * no_repulsion (C1, C2): SQUAD without its repulsion term (run `squad_norep`) in SQUAD's place;
  * fixed_sigma (C3): the sweep's control variant, one fixed kernel width behind every sigma^2 label;
  * faulty_mean (C4): the property checks on a score that averages instead of taking the max;
and the A/A nulls: aa_best_baseline (C1, C2: the best baseline of the next seed in SQUAD's place, `aa_best_baseline`)
and aa_one_sigma (C3: one kernel width behind every label, the runs of fixed_sigma)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

from . import plan, scores
from .plan import BASELINES, CONTROL, PLACEBO
from .scores import spearman_vs_sigma2

READS = ("soft_qd.benchmarks", "soft_qd.methods", "soft_qd.seeds",
         "soft_qd.control", "soft_qd.heatmap", "soft_qd.evaluation.vendi_max_n")

CLAIMS = Path(__file__).with_name("claims.yaml")
SUBMODULAR_TOL = 1e-9  # relative to S: the grid sum is exactly submodular up to float rounding


def run_metrics(key: tuple[str, int, str, int], job: dict, centroids: dict[int, np.ndarray], vendi_max_n: int) -> dict:
    """One row of metrics.csv: the run (benchmark, m, method, seed) read from its job's .npz (plan.job_path)."""
    benchmark, m, method, seed = key
    f, b = job[f"{method}.f"], job[f"{method}.b"]
    qd = scores.qd_score_cvt(f, b, centroids[m])
    vendi = scores.vendi_score(b, max_n=vendi_max_n)
    return {"benchmark": benchmark, "m": m, "method": method, "seed": seed,
            "n_evals": int(job[f"{method}.n_evals"]), "budget": int(job["budget"]), "seconds": float(job[f"{method}.seconds"]),
            "n_solutions": len(f), "qd_score": qd["qd_score"], "coverage": qd["coverage"], "mean_f": f.mean(),
            "max_f": f.max(), "vendi": vendi, "quality_weighted_vendi": vendi * f.mean(),
            "approx_soft_qd": scores.approx_soft_qd_score(f, b)}


def load_runs(p: dict, vendi_max_n: int) -> pd.DataFrame:
    """metrics.csv: one row per planned run, in the plan's order (each job's file read once)."""
    centroids = {m: read_npz(plan.archive_path(m))["centroids"] for m in plan.run_ms(p)}
    jobs = {job: read_npz(plan.job_path(*job)) for job in plan.jobs(p)}
    return pd.DataFrame([run_metrics((bench, m, method, seed), jobs[bench, m, seed], centroids, vendi_max_n)
                         for bench, m, method, seed in plan.runs(p)])


def _per_seed(runs: pd.DataFrame, benchmark: str, m: int, metric: str, method: str):
    """(the method's metric per seed, the best baseline's per seed), or None when either is missing."""
    d = runs[(runs.benchmark == benchmark) & (runs.m == m)].pivot_table(index="seed", columns="method", values=metric)
    if method not in d or not set(BASELINES) & set(d.columns):
        return None
    return d[method], d[[c for c in BASELINES if c in d]].max(axis=1)


def ratio_to_best_baseline(runs: pd.DataFrame, benchmark: str, m: int, metric: str, method: str = "squad") -> pd.Series:
    """Per seed: the method's metric / the best baseline's (empty where a method is missing)."""
    pair = _per_seed(runs, benchmark, m, metric, method)
    return pd.Series(dtype=float) if pair is None else pair[0] / pair[1]


def diff_to_best_baseline(runs, benchmark, m, metric, method: str = "squad") -> pd.Series:
    pair = _per_seed(runs, benchmark, m, metric, method)
    return pd.Series(dtype=float) if pair is None else pair[0] - pair[1]


def _values(values) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=float).ravel() if not np.isnan(v)]


def measure_comparisons(runs: pd.DataFrame, method: str = "squad") -> dict[str, list]:
    """C1 and C2 for `method` (SQUAD, or the control in its place): QD / Vendi ratios to the best baseline."""
    r4, r16 = (ratio_to_best_baseline(runs, "rastrigin", m, "qd_score", method) for m in (4, 16))
    return {"c1_qd_ratio_m4": _values(r4), "c2_qd_ratio_m16": _values(r16),
            "c2_vendi_ratio_m16": _values(ratio_to_best_baseline(runs, "rastrigin", 16, "vendi", method)),
            "c2_qd_ratio_growth_16_minus_4": _values((r16 - r4).dropna())}


def measure_sweep(sweep: pd.DataFrame, variant: str = "sigma") -> dict[str, list]:
    """C3: per seed, Spearman rho of mean fitness and of Vendi against the sigma^2 label."""
    rho = [spearman_vs_sigma2(g) for _, g in sweep[sweep.variant == variant].groupby("seed")]
    return {"c3_spearman_fitness_vs_sigma2": [float(r["mean_f"]) for r in rho],
            "c3_spearman_vendi_vs_sigma2": [float(r["vendi"]) for r in rho]}


SHUFFLE_SEED = 2026  # C3's placebo: the sigma^2 labels permuted among each seed's sweep runs


def sigma_shuffled(sweep: pd.DataFrame, variant: str = "sigma", seed: int = SHUFFLE_SEED) -> pd.DataFrame:
    """C3's placebo: the sweep's own runs (``variant``) with their sigma^2 labels permuted within each seed by a seeded
    random permutation other than the identity (its own per seed), so that a run's label no longer says its kernel
    width; the runs, their fitness and Vendi are the method's. Other variants are left out."""
    out = []
    for k, (s, g) in enumerate(sweep[sweep.variant == variant].groupby("seed", sort=True)):
        labels = g.sigma2.to_numpy()
        rng = np.random.default_rng([seed, int(s)])
        order = np.arange(len(labels))
        while len(labels) > 1 and (order == np.arange(len(labels))).all():
            order = rng.permutation(len(labels))
        out.append(g.assign(sigma2=labels[order]))
    return pd.concat(out, ignore_index=True) if out else sweep.iloc[:0]


def measure_properties(trials: pd.DataFrame, limit: pd.DataFrame, variant: str = "soft_qd") -> dict[str, list]:
    """C4: per trial 1/0 whether each property held (to float rounding); per configuration the limit's error."""
    trials, limit = trials[trials.variant == variant], limit[limit.variant == variant]
    tol = SUBMODULAR_TOL * trials.S.abs().clip(lower=1.0)
    return {"c4_adding_never_decreases": _values(trials.add_gain >= -tol),
            "c4_improving_never_decreases": _values(trials.improve_gain >= -tol),
            "c4_submodular": _values(trials.submodular_margin >= -tol),
            "c4_limit_rel_error_sigma_0.01": _values(limit[np.isclose(limit.sigma, 0.01)].rel_error)}


def measure(runs: pd.DataFrame, sweep: pd.DataFrame, trials: pd.DataFrame, limit: pd.DataFrame) -> dict[str, list]:
    """{claim metric: [value per unit]}; a metric with no units stays an empty list (claims.py then names it)."""
    out = {**measure_comparisons(runs), **measure_sweep(sweep), **measure_properties(trials, limit),
           "info_sphere_qd_ratio_m16": _values(ratio_to_best_baseline(runs, "sphere", 16, "qd_score")),
           "info_sphere_qd_ratio_m4": _values(ratio_to_best_baseline(runs, "sphere", 4, "qd_score")),
           "info_approx_soft_qd_diff_m16": _values(diff_to_best_baseline(runs, "rastrigin", 16, "approx_soft_qd"))}
    return {k: v for k, v in out.items() if v}


def aa_best_baseline(runs: pd.DataFrame) -> pd.DataFrame:
    """The A/A null's runs for C1 and C2: per (benchmark, m, seed) the best baseline's value of each compared metric
    (the comparator of "ratio to the best baseline"), taken from the next seed of the same (benchmark, m) and put in
    SQUAD's place (claims.stand_in), so that the ratio is the best baseline against an independent seed of itself. A
    (benchmark, m) with one seed has no independent partner and gives no value."""
    metrics = ["qd_score", "vendi", "approx_soft_qd"]
    best = runs[runs.method.isin(BASELINES)].groupby(["benchmark", "m", "seed"], as_index=False)[metrics].max()
    table = pd.concat([runs, best.assign(method="best_baseline")], ignore_index=True)
    return claims_mod.stand_in(table, "method", {"squad": "best_baseline"}, seed="seed", keys=["benchmark", "m"])


def measure_controls(runs: pd.DataFrame, sweep: pd.DataFrame, trials: pd.DataFrame, limit: pd.DataFrame) -> dict:
    """{control: {claim metric: [value per unit]}}, by the same functions as the claims' own values. An A/A null
    (aa_*) keeps every metric of its claims, empty where it has no independent partner ("no value measured")."""
    controls = {"no_repulsion": measure_comparisons(runs, CONTROL), "fixed_sigma": measure_sweep(sweep, "fixed"),
                "faulty_mean": measure_properties(trials, limit, "faulty_mean"),
                "placebo_random_neighbours": measure_comparisons(runs, PLACEBO),
                "placebo_sigma_shuffled": measure_sweep(sigma_shuffled(sweep))}
    nulls = {"aa_best_baseline": measure_comparisons(aa_best_baseline(runs)),
             "aa_one_sigma": measure_sweep(sweep, "fixed")}  # C3's A/A null: the runs of fixed_sigma, see claims.yaml
    return {name: {k: v for k, v in metrics.items() if v} for name, metrics in controls.items()} | nulls


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over seeds per benchmark x m x method (the paper's table)."""
    cols = ["qd_score", "coverage", "mean_f", "vendi", "quality_weighted_vendi", "approx_soft_qd", "n_solutions",
            "n_evals", "seconds"]
    g = runs.groupby(["benchmark", "m", "method"])[cols]
    s = g.mean().join(g.std(ddof=1).add_suffix("_std")).join(g.size().rename("seeds"))
    return s.reset_index()


def main(argv=None):
    step = Step("soft_qd", "evaluate", __doc__)
    step.parser.add_argument("--sweep", type=Path, required=True, help="the sigma sweep (.csv, every seed)")
    step.parser.add_argument("--trials", type=Path, required=True)
    step.parser.add_argument("--limit", type=Path, required=True)
    step.parser.add_argument("--metrics", type=Path, required=True, help="per-run metrics (.csv)")
    step.parser.add_argument("--summary", type=Path, required=True, help="mean/std per benchmark x m x method (.csv)")
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    runs = load_runs(step.subtree("soft_qd"), p["vendi_max_n"])  # the runs: files of the plan, not arguments
    sweep = pd.read_csv(args.sweep)
    trials, limit = pd.read_csv(args.trials), pd.read_csv(args.limit)
    result = claims_mod.check(CLAIMS, measure(runs, sweep, trials, limit), args.profile, args.claims, step.log,
                              controls=measure_controls(runs, sweep, trials, limit))
    write_text(args.metrics, runs.to_csv(index=False, float_format="%.6g"))
    write_text(args.summary, summary(runs).to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.summary, args.claims],
                outputs=[args.metrics, args.summary, args.claims])


if __name__ == "__main__":
    main()
