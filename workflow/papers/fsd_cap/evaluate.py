"""All runs -> the long metrics table, the paper's main table (methods x {structural, uniform} accuracy at 99.5 %
missing, + full features) and the claims of claims.yaml (paired per (mask, seed) differences).

The claims' metrics come from one function, `measure(table, rate, method)`: with method = fsd_cap they are the
claims; with a control variant in FSD-CAP's place (cap_no_classes: the class-aware step broken; fsd_cap_official:
the official label use, leaking the selection nodes' labels; cap_label_free: CAP's classes from k-means of the stage-1
features, the placebo) they are that control's values for the same checks.
The A/A nulls (`AA`, `aa_null`) put each claim's comparator, from another seed of the same (graph, task, mask), in
FSD-CAP's place and measure the same differences."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import plan
from .tables import at_rate

READS = ("fsd_cap.plan", "fsd_cap.missing")

CLAIMS = Path(__file__).with_name("claims.yaml")
# control -> method in FSD-CAP's place (placebo_class_labels: CAP with label-free classes, the claims' placebo)
CONTROLS = {"cap_no_classes": "cap_no_classes", "official_protocol": "fsd_cap_official", "placebo_class_labels": "cap_label_free"}
GRAPHS = (("csbm", "csbm"), ("mfeat", "mfeat"))  # (data set, metric suffix)
# A/A null -> {claim metric: the comparator whose runs of another seed stand in for FSD-CAP's when it is measured}
AA = {"aa_fp_pcfi": {f"k1_gain_vs_{c}_{tag}": m for _, tag in GRAPHS for c, m in (("fp", "fp"), ("pcfi", "pcfi_lite"))},
      "aa_full": {f"k2_gap_to_full_{tag}": "full" for _, tag in GRAPHS},
      "aa_fp_full": {"k3_auc_gain_vs_fp": "fp", "k3_auc_gap_to_full": "full"},
      "aa_stage1_only": {f"k4_cap_gain_{tag}": "stage1_only" for _, tag in GRAPHS},
      "aa_fp": {"k5_gain_vs_fp_het": "fp"}}


def long_table(paths: list[Path]) -> pd.DataFrame:
    rows = []
    for path in paths:
        run = read_json(path)
        rows += [{"dataset": run["dataset"], "seed": run["seed"], **r} for r in run["rows"]]
    return pd.DataFrame(rows)


def by_unit(t: pd.DataFrame, dataset: str, value: str) -> pd.DataFrame:
    """(mask, seed) x method table of one value on one data set."""
    return t[t.dataset.eq(dataset)].pivot_table(index=["mask", "seed"], columns="method", values=value)


def paired(t: pd.DataFrame, dataset: str, a: str, b: str, value: str) -> list[float]:
    """value(a) - value(b) per (mask, seed) where both ran on `dataset`."""
    d = by_unit(t, dataset, value)
    if a not in d or b not in d:
        return []
    return [float(v) for v in (d[a] - d[b]).dropna()]


def selection_optimism(t: pd.DataFrame, dataset: str, method: str) -> list[float]:
    """Validation (selection-node) accuracy minus test accuracy of one method, per (mask, seed). Large when the
    imputed features of the selection nodes carry their labels."""
    val, test = by_unit(t, dataset, "val_acc"), by_unit(t, dataset, "test_acc")
    return [float(v) for v in (val[method] - test[method]).dropna()] if method in val else []


def measure(t: pd.DataFrame, rate: float, method: str = "fsd_cap") -> dict[str, list[float]]:
    """Every claim metric with `method` in FSD-CAP's place (per (mask, seed) unit)."""
    node = at_rate(t, rate, "node")
    link = at_rate(t, rate, "link") if "link" in set(t.task) else t.iloc[:0]
    m = {}
    for ds, tag in GRAPHS:
        m[f"k1_gain_vs_fp_{tag}"] = paired(node, ds, method, "fp", "test_acc")
        m[f"k1_gain_vs_pcfi_{tag}"] = paired(node, ds, method, "pcfi_lite", "test_acc")
        m[f"k2_gap_to_full_{tag}"] = paired(node, ds, method, "full", "test_acc")
        m[f"k4_cap_gain_{tag}"] = paired(node, ds, method, "stage1_only", "test_acc")
        m[f"s1_val_minus_test_{tag}"] = selection_optimism(node, ds, method)
        m[f"info_train_labels_only_minus_fp_{tag}"] = paired(node, ds, "cap_train_labels_only", "fp", "test_acc")
        m[f"info_stage1_minus_fp_{tag}"] = paired(node, ds, "stage1_only", "fp", "test_acc")
        m[f"info_official_minus_fp_{tag}"] = paired(node, ds, "fsd_cap_official", "fp", "test_acc")
        m[f"info_official_minus_stage1_{tag}"] = paired(node, ds, "fsd_cap_official", "stage1_only", "test_acc")
    if len(link):
        m["k3_auc_gain_vs_fp"] = paired(link, "csbm", method, "fp", "test_auc")
        m["k3_auc_gap_to_full"] = paired(link, "csbm", method, "full", "test_auc")
    m["k5_gain_vs_fp_het"] = paired(node, "csbm_het", method, "fp", "test_acc")
    for g in ("0.5", "2"):
        m[f"info_gamma{g}_minus_gamma1"] = paired(node, "csbm", f"fsd_gamma{g}", method, "test_acc")
    return {k: v for k, v in m.items() if v}


def aa_table(t: pd.DataFrame, rate: float, comparator: str) -> pd.DataFrame:
    """The long table with `comparator`'s rows of another seed of the same (graph, task, mask) in FSD-CAP's place
    (claims.stand_in, seeds shifted cyclically). `full` has no mask and no rate; its rows are first copied under
    every mask kind at the main rate, as `at_rate` shows them, so that its stand-in is measured where FSD-CAP is."""
    source = comparator
    if comparator == "full":
        source = "full_at_rate"
        full = t[t.method.eq("full")]
        copies = [full[full.task.eq(task)].assign(mask=kind, rate=rate, method=source)
                  for task in sorted(set(full.task))
                  for kind in sorted(set(t[t.task.eq(task) & np.isclose(t.rate, rate)]["mask"]))]
        t = pd.concat([t, *copies], ignore_index=True)
    return claims_mod.stand_in(t, "method", {"fsd_cap": source}, seed="seed", keys=["dataset", "task", "mask", "rate"])


def aa_null(t: pd.DataFrame, rate: float, comparators: dict[str, str]) -> dict[str, list[float]]:
    """An A/A null: each metric measured by `measure` with its comparator of another seed in FSD-CAP's place; a unit
    whose comparator ran one seed only gives no value, and a metric with no value is an empty list (judged
    inconclusive, never a missing metric)."""
    return {metric: measure(aa_table(t, rate, comparator), rate).get(metric, []) for metric, comparator in comparators.items()}


def main_table(t: pd.DataFrame, rate: float) -> pd.DataFrame:
    """dataset x method rows; mean and std over seeds of test accuracy per mask kind (+ link AUC where run)."""
    node = at_rate(t, rate, "node")
    g = node.groupby(["dataset", "method", "mask"]).test_acc.agg(["mean", "std", "count"]).reset_index()
    wide = g.pivot_table(index=["dataset", "method"], columns="mask", values=["mean", "std", "count"])
    wide.columns = [f"acc_{kind}_{stat}" for stat, kind in wide.columns]
    if "link" in set(t.task):
        link = at_rate(t, rate, "link").groupby(["dataset", "method", "mask"]).test_auc.mean().unstack("mask")
        link.columns = [f"auc_{k}" for k in link.columns]
        wide = wide.join(link, how="left")
    return wide.reset_index()


def main(argv=None):
    step = Step("fsd_cap", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--main-table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    table = long_table([Path(path) for path in plan.run_paths(step.values["fsd_cap.plan"])])
    controls = {name: measure(table, p["rate"], method) for name, method in CONTROLS.items()}
    controls |= {name: aa_null(table, p["rate"], comparators) for name, comparators in AA.items()}
    result = claims_mod.check(CLAIMS, measure(table, p["rate"]), args.profile, args.claims, step.log, controls=controls)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.main_table, main_table(table, p["rate"]).to_csv(index=False, float_format="%.4f"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.main_table, args.claims],
                outputs=[args.table, args.main_table, args.claims])


if __name__ == "__main__":
    main()
