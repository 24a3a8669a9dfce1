"""Every run -> one metrics table (data set x r_V x method x fold) and the view-weight table; the claims of claims.yaml.

The claims' metrics come from one function, `measure(..., method)`: with method = scsd they are the claims; with a
control in SCSD's place (scsd_frozen_codebook: random codes that never learn; scsd_no_lcw: uniform view weights)
they are the control's values for the same checks. The A/A nulls (`AA`, `aa_nulls`) put each claim's comparator, from
another fold (= seed) of the same data set and r_V, in SCSD's place and measure the same per-fold values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from .plan import cell_path, cells

READS = ("scsd.plan", "scsd.datasets")

CLAIMS = Path(__file__).with_name("claims.yaml")
BASELINES = ("late_fusion_mlp", "dicnet_lite", "br_logreg")
ABLATIONS = {"vq": "scsd_no_vq", "xrec": "scsd_no_xrec", "lcw": "scsd_no_lcw", "sd": "scsd_no_sd"}
MIN_ABLATION_DROP = 0.002  # spec K2: an ablation counts as beaten when its AP is >= 0.2 pp below SCSD's
CONTROLS = {"frozen_codebook": "scsd_frozen_codebook", "uniform_weights": "scsd_no_lcw"}  # control -> method in SCSD's place
BEST_BASELINE = "best_baseline"  # K1's comparator as one method: per fold, the best of BASELINES in each metric
# A/A null -> the claim metrics it gives (see aa_nulls: which comparator stands in for SCSD for each)
AA = {"aa_best_baseline": [f"k1_{m}_margin_{ds}" for ds in ("synth", "mfeat", "yeast") for m in ("ap", "rl")],
      "aa_ablations": ["k2_ablations_beaten"],
      "aa_late_fusion_mlp": ["k4_drop_scsd_minus_late_fusion"]}


def load_runs(plan: dict, datasets: dict) -> list[dict]:
    """Every run of every cell of the plan (runs/<dataset>/rv<r>/s<seed>.json), ordered by (data set, r_V, method,
    seed)."""
    runs = []
    for ds, rv, seed in cells(plan, datasets):
        cell = read_json(cell_path(ds, rv, seed))
        runs += [r | {"dataset": ds, "missing_view": cell["missing_view"], "seed": cell["seed"],
                      "view_names": cell["view_names"]} for r in cell["runs"]]
    return sorted(runs, key=lambda r: (r["dataset"], r["missing_view"], r["method"], r["seed"]))


def tables(runs: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, weights = [], []
    for r in runs:
        key = {"dataset": r["dataset"], "missing_view": r["missing_view"], "method": r["method"], "seed": r["seed"]}
        rows.append(key | r["test"] | {"epochs_run": r["epochs_run"], "codebook_usage": r["codebook_usage"]})
        by_tau = r.get("weights_by_tau", {})
        for v, name in enumerate(r["view_names"]):
            weights.append(key | {"view": v + 1, "view_name": name, "weight": r["view_weights"][v], "view_val_ap": r["view_val_ap"][v],
                                  "quality": r["view_quality"][v], **{f"weight_tau{t}": w[v] for t, w in by_tau.items()}})
    return pd.DataFrame(rows), pd.DataFrame(weights)


def main_grid(table: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """Runs of each data set at its own r_V (the main table), not the sweep's extra rates."""
    own = plan["own_missing_view"]
    return table[[own.get(ds) == rv for ds, rv in zip(table.dataset, table.missing_view)]]


def measure(table: pd.DataFrame, weights: pd.DataFrame, plan: dict, method: str = "scsd") -> dict[str, list[float]]:
    """Every claim metric per fold, with `method` in SCSD's place."""
    m: dict[str, list[float]] = {}

    def put(name, values):
        values = [float(v) for v in values if not np.isnan(v)]
        if values:
            m[name] = values

    main = main_grid(table, plan)
    for ds, d in main.groupby("dataset"):
        ap = d.pivot_table(index="seed", columns="method", values="ap")
        rl = d.pivot_table(index="seed", columns="method", values="one_minus_rl")
        base = [b for b in BASELINES if b in ap]
        if method in ap and base:
            put(f"k1_ap_margin_{ds}", ap[method] - ap[base].max(axis=1))
            put(f"k1_rl_margin_{ds}", rl[method] - rl[base].max(axis=1))
        abl = {k: a for k, a in ABLATIONS.items() if a in ap}
        if ds == "synth" and method in ap and abl:
            gains = pd.DataFrame({k: ap[method] - ap[a] for k, a in abl.items()})  # in a control's place: its own gains
            if len(abl) == len(ABLATIONS):
                put("k2_ablations_beaten", (gains >= MIN_ABLATION_DROP).sum(axis=1))
            for k in abl:
                put(f"info_ap_gain_from_{k}", [gains[k].mean()])
        if ds == "synth" and method in ap:
            put("info_codebook_usage", [d[d.method == method].codebook_usage.mean()])
    w = weights[(weights.dataset == "synth") & (weights.method == method)]
    w = w[w.missing_view == plan["own_missing_view"].get("synth")]
    if len(w):
        per_seed = list(w.groupby("seed"))
        put("k3_spearman_weight_vs_view_ap", [stats.spearmanr(g.weight, g.view_val_ap).statistic for _, g in per_seed])
        put("k3_view1_weight_largest", [float(g.sort_values("view").weight.to_numpy().argmax() == 0) for _, g in per_seed])
        for col in [c for c in w.columns if c.startswith("weight_tau")]:
            tau = col.removeprefix("weight_tau")
            put(f"info_weight_spread_tau{tau}", [np.mean([g[col].max() - g[col].min() for _, g in per_seed])])
            if tau == "0.1":
                put("info_spearman_tau0.1", [np.mean([stats.spearmanr(g[col], g.view_val_ap).statistic for _, g in per_seed])])
    sweep = plan["sweep"]
    s = table[(table.dataset == sweep["dataset"]) & table.method.isin([method, "late_fusion_mlp"])]
    ap = s.pivot_table(index=["seed", "method"], columns="missing_view", values="ap")
    if 0.1 in ap and 0.7 in ap:
        drop = (ap[0.1] - ap[0.7]).unstack("method")
        if {method, "late_fusion_mlp"} <= set(drop):
            put("k4_drop_scsd_minus_late_fusion", drop[method] - drop["late_fusion_mlp"])
    return m


def in_scsds_place(table: pd.DataFrame, comparator: str) -> pd.DataFrame:
    """The run table with `comparator`'s runs of another fold of the same (data set, r_V) in SCSD's place
    (claims.stand_in, folds shifted cyclically); a cell with one fold has no independent partner and no SCSD row."""
    return claims_mod.stand_in(table, "method", {"scsd": comparator}, seed="seed", keys=["dataset", "missing_view"])


def with_best_baseline(table: pd.DataFrame) -> pd.DataFrame:
    """The run table plus K1's comparator as one method: per (data set, r_V, fold), the best AP and the best 1-RL of the
    baselines that ran there, as K1's margins take them (`measure`: SCSD minus the per-fold maximum over BASELINES)."""
    b = table[table.method.isin(BASELINES)]
    best = b.groupby(["dataset", "missing_view", "seed"], as_index=False)[["ap", "one_minus_rl"]].max()
    return pd.concat([table, best.assign(method=BEST_BASELINE)], ignore_index=True)


def aa_ablations_beaten(table: pd.DataFrame, plan: dict) -> list[float]:
    """K2's A/A null: per fold on synth, how many of the four ablations of the previous fold (cyclically) beat the same
    ablation of this fold by >= 0.2 pp AP: each of K2's four comparisons with its own comparator in SCSD's place."""
    d = main_grid(table, plan)
    d = d[d.dataset == "synth"]
    gains = {}
    for k, ablation in ABLATIONS.items():
        ap = in_scsds_place(d, ablation).pivot_table(index="seed", columns="method", values="ap")
        if "scsd" not in ap or ablation not in ap:
            return []
        gains[k] = ap["scsd"] - ap[ablation]
    return [float(v) for v in (pd.DataFrame(gains).dropna() >= MIN_ABLATION_DROP).sum(axis=1)]


def aa_nulls(table: pd.DataFrame, weights: pd.DataFrame, plan: dict) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls' values under the claims' metric names, measured by `measure` (K1, K4) or its per-comparison
    equivalent (K2); a metric with no value (one fold: no independent partner) is an empty list, judged
    inconclusive, never a missing metric."""
    k1 = measure(in_scsds_place(with_best_baseline(table), BEST_BASELINE), weights, plan)
    k4 = measure(in_scsds_place(table, "late_fusion_mlp"), weights, plan)
    return {"aa_best_baseline": {metric: k1.get(metric, []) for metric in AA["aa_best_baseline"]},
            "aa_ablations": {"k2_ablations_beaten": aa_ablations_beaten(table, plan)},
            "aa_late_fusion_mlp": {metric: k4.get(metric, []) for metric in AA["aa_late_fusion_mlp"]}}


def main(argv=None):
    step = Step("scsd", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--weights", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    table, weights = tables(load_runs(step.values["scsd.plan"], step.values["scsd.datasets"]))
    plan = p | {"own_missing_view": {ds: p[ds]["missing_view"] for ds in p["datasets"]}}  # sections scsd.plan + scsd.datasets
    controls = {name: measure(table, weights, plan, method) for name, method in CONTROLS.items()}
    controls |= aa_nulls(table, weights, plan)
    result = claims_mod.check(CLAIMS, measure(table, weights, plan), args.profile, args.claims, step.log, controls=controls)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.weights, weights.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.weights, args.claims],
                outputs=[args.table, args.weights, args.claims])


if __name__ == "__main__":
    main()
