"""Tabulate every run's final direction, measure each claim's metrics per data set for the methods and for their
negative controls, and judge claims.yaml."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

from . import plan

READS = ("adam_implicit_bias",)

CLAIMS = Path(__file__).with_name("claims.yaml")
BATCH_SWEEP = {"adam": ["inc_adam", "mb2_adam", "mb5_adam", "det_adam"],
               "signum": ["inc_signum", "mb2_signum", "mb5_signum", "det_signum"],
               "gd": ["inc_gd", "mb2_gd", "mb5_gd", "det_gd"]}
# Negative controls (claims.yaml `controls:`): algorithm -> the run scored in its place, by the same ``measure``.
CONTROLS = {
    # per-sample vs full batch exchanged: Det-Adam where a claim reads Inc-Adam or AdamProxy, and vice versa
    "batch_regime_swapped": {"inc_adam": "det_adam", "inc_adam_b99": "det_adam", "adam_proxy": "det_adam",
                             "det_adam": "inc_adam"},
    "gd_for_signum": dict(zip(BATCH_SWEEP["signum"], BATCH_SWEEP["gd"])),  # the sign removed: plain GD
    "signum_for_adam": dict(zip(BATCH_SWEEP["adam"], BATCH_SWEEP["signum"])),  # batch-invariant Signum's sweep
}
# Placebos (claims.yaml `nulls: {placebo: ...}`): the method with only the credited ingredient made inert, its run in
# the method's place. The batch regime of Adam's second moment (params.yaml `plan.placebo`, methods.train's precond):
# Inc-Adam and AdamProxy dividing by the full-batch gradient's square, Det-Adam by the mean per-sample square; for C2
# Det-Adam's alone (its comparator Inc-Adam kept). Signum's coordinate-wise sign taken in a random basis (C3).
CONTROLS |= {
    "placebo_second_moment_regime": {"inc_adam": "inc_adam_fullv", "inc_adam_b99": "inc_adam_b99_fullv",
                                     "adam_proxy": "adam_proxy_fullv", "det_adam": "det_adam_psv"},
    "placebo_full_batch_second_moment": {"det_adam": "det_adam_psv"},
    "placebo_sign_basis": {algo: f"{algo}_rot" for algo in BATCH_SWEEP["signum"]},
}
SHUFFLE_SEED = 2026  # C5's placebo: the batch sizes permuted among each data set's Adam sweep runs


def batch_shuffled(table: pd.DataFrame, seed: int = SHUFFLE_SEED) -> pd.DataFrame:
    """C5's placebo: on each GR data set, Adam's four sweep runs (b = 1, 2, 5, N) relabelled by a seeded random
    permutation other than the identity (its own per data set), so that a run's place in the sweep no longer says its
    batch size; the runs themselves, and every other row, are kept."""
    out = table.copy()
    sweep = BATCH_SWEEP["adam"]
    for k, ds in enumerate(sorted(table.loc[table.family == "gr", "dataset"].unique())):
        rows = (out.dataset == ds) & out.algorithm.isin(sweep)
        if rows.sum() != len(sweep):
            continue
        rng = np.random.default_rng([seed, k])
        order = np.arange(len(sweep))
        while (order == np.arange(len(sweep))).all():
            order = rng.permutation(len(sweep))
        out.loc[rows, "algorithm"] = out.loc[rows, "algorithm"].map(dict(zip(sweep, np.array(sweep)[order])))
    return out


# A/A nulls (claims.yaml `nulls:`): the comparator of the same family's *next* data set (another seeded draw) in the
# method's place, so that a comparison meets the draw-to-draw noise of the comparator and nothing else.
NULLS = {"aa_inc_adam": {algo: "inc_adam" for algo in BATCH_SWEEP["adam"][1:]}}  # Inc-Adam in place of b = 2, 5, N


def load_runs(files: dict[tuple[str, str], str]) -> pd.DataFrame:
    """Long table of the recorded curves: dataset, algorithm, step, metric, value, from {(dataset, algorithm): the
    train job's .npz holding that run (its arrays named <algorithm>.<field>)}."""
    frames, jobs = [], {}
    for (dataset, algo), path in files.items():
        if path not in jobs:
            jobs[path] = read_npz(path)
        traj = jobs[path]
        for metric in ("cos_w2", "cos_winf", "cos_wfp", "r2", "rinf"):
            frames.append(pd.DataFrame({"dataset": dataset, "algorithm": algo, "step": traj[f"{algo}.steps"],
                                        "metric": metric, "value": traj[f"{algo}.{metric}"]}))
    return pd.concat(frames, ignore_index=True)


def final_table(curves: pd.DataFrame) -> pd.DataFrame:
    last = curves.sort_values("step").groupby(["dataset", "algorithm", "metric"]).tail(1)
    table = last.pivot_table(index=["dataset", "algorithm"], columns="metric", values="value").reset_index()
    table.insert(1, "family", table["dataset"].str.rstrip("0123456789"))
    return table


def violations(values: list[float], increasing: bool) -> int:
    """How many consecutive pairs break the expected monotone order."""
    diffs = np.diff(values)
    return int(np.sum(diffs < 0) if increasing else np.sum(diffs > 0))


def aa_null(table: pd.DataFrame, replace: dict[str, str]) -> pd.DataFrame:
    """The A/A null's table: each method of ``replace`` taken from its comparator's run on the next data set of the
    same family (``claims_mod.stand_in`` with the data set as the seed: every run is deterministic, so a data set's
    seeded draw is the only independent repetition there is), on the data sets where the method itself ran. A family
    with one data set has no independent partner and gives no value."""
    swapped = claims_mod.stand_in(table, "algorithm", replace, seed="dataset", keys=["family"])
    ran = pd.MultiIndex.from_frame(table[["dataset", "algorithm"]])
    return swapped[pd.MultiIndex.from_frame(swapped[["dataset", "algorithm"]]).isin(ran)]


def measure_controls(table: pd.DataFrame) -> dict[str, dict[str, list[float]]]:
    """{control: {claim metric: [value per data set]}}, each from ``measure`` with the control in the method's place;
    an A/A null keeps every metric the method has (empty where it has no independent partner: "no value measured")."""
    out = {name: measure(claims_mod.stand_in(table, "algorithm", replace)) for name, replace in CONTROLS.items()}
    out["placebo_batch_shuffled"] = measure(batch_shuffled(table))
    own = measure(table)
    for name, replace in NULLS.items():
        null = measure(aa_null(table, replace))
        out[name] = {metric: null.get(metric, []) for metric in own}
    return out


def measure(table: pd.DataFrame) -> dict[str, list[float]]:
    """{claim metric: [value per data set]}; a data set whose runs are absent is left out of that metric (the claim
    then falls short of its units); a metric measured on no data set is missing, an error of the claims engine."""
    f = table.set_index(["dataset", "algorithm"])
    val = lambda ds, algo, col: float(f.loc[(ds, algo), col]) if (ds, algo) in f.index else np.nan  # noqa: E731
    m: dict[str, list[float]] = {}
    add = lambda key, v: m.setdefault(key, []).append(v) if not np.isnan(v) else None  # noqa: E731
    for ds in sorted(table.loc[table.family == "gr", "dataset"].unique()):
        add("c1_cos_w2_inc_adam", val(ds, "inc_adam", "cos_w2"))
        add("c1_r2_inc_adam", val(ds, "inc_adam", "r2"))
        add("c1_rinf_inc_adam", val(ds, "inc_adam", "rinf"))
        add("c2_rinf_det_adam", val(ds, "det_adam", "rinf"))
        add("c2_rinf_gap_det_minus_inc", val(ds, "det_adam", "rinf") - val(ds, "inc_adam", "rinf"))
        add("c3_rinf_inc_signum", val(ds, "inc_signum", "rinf"))
        add("c3_rinf_det_signum", val(ds, "det_signum", "rinf"))
        signum = [val(ds, a, "rinf") for a in BATCH_SWEEP["signum"]]
        if not np.isnan(signum).any():
            add("c3_signum_min_rinf", min(signum))
        adam = [val(ds, a, "rinf") for a in BATCH_SWEEP["adam"]]  # batch 1, 2, 5, 10
        adam_r2 = [val(ds, a, "r2") for a in BATCH_SWEEP["adam"]]
        if not np.isnan(adam + adam_r2).any():
            add("c5_rinf_violations", violations(adam, increasing=True))
            add("c5_r2_violations", violations(adam_r2, increasing=False))
            add("c5_rinf_rise_b5_minus_b1", adam[2] - adam[0])
            add("c5_rinf_rise_b10_minus_b1", adam[3] - adam[0])
    for ds in sorted(table.loc[table.family == "gauss", "dataset"].unique()):
        add("c4_cos_wfp_proxy", val(ds, "adam_proxy", "cos_wfp"))
        for algo in ("inc_adam_b99", "inc_adam"):
            fp, farther = val(ds, algo, "cos_wfp"), min(val(ds, algo, "cos_w2"), val(ds, algo, "cos_winf"))
            add(f"c4_cos_wfp_{algo}", fp)
            add(f"c4_fp_lead_{algo}", fp - farther)
        add("c4_cos_winf_det_adam", val(ds, "det_adam", "cos_winf"))
        add("info_cos_wfp_inc_adam_b9999", val(ds, "inc_adam_b9999", "cos_wfp"))
    return m


def main(argv=None):
    step = Step("adam_implicit_bias", "evaluate", __doc__)
    step.parser.add_argument("--curves", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    curves = load_runs(plan.run_files(p))
    table = final_table(curves)
    result = claims_mod.check(CLAIMS, measure(table), args.profile, args.claims, step.log, controls=measure_controls(table))
    write_text(args.curves, curves.to_csv(index=False))
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.curves, args.table, args.claims])


if __name__ == "__main__":
    main()
