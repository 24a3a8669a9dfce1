"""Collect every cell's frontiers and test points into long tables and judge claims.yaml (one unit = a (data set, seed)).

The cells and their files come from the plan (params.yaml: fairness_pareto.plan), not from the command line.
The A/A nulls (``AA``, ``aa_columns``) put each check's comparator, from another seed of the same data set, in the
method's place and measure the same per-cell metric; like the controls, their values are cell columns prefixed
'<null>__'."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import methods as M
from . import plan

READS = ("fairness_pareto.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
EOD_LEVEL = 0.03   # C4: accuracy at test EOd <= 0.03 (spec), each point mixed with the constant predictor to meet it
EPS_CLAIMS = 0.3   # C1/C3: eps grid 0 : 0.01 : 0.3 (spec)
SEP = "__"         # cells.csv: '<control>__<column>' holds a control's value of <column>
CONTROLS = ("shuffled_group", "fact_frontier", "shared_bias", "lemma2_without_eod", "placebo_group_caps")
GROUP_BLIND = "ours_group_blind_caps"  # frontiers.py: the MS frontier with group-blind caps (placebo of C1, C2)
# A/A null -> {cell column: the comparator whose value of another seed stands in for the method's when it is measured}
AA = {"aa_fact_factgstar": {"min_gap_factgstar_eod": "factgstar", "max_gap_fact_eod_eps01": "fact",
                            "max_gap_factgstar_eod_eps01": "factgstar"},   # C1: a frontier in the MS frontier's place
      "aa_eqodds_gstar": {"ours_minus_eqodds": "eqodds", "ours_minus_gstar": "gstar_eod"}}  # C4: a method in ours'
C4_METHODS = ("ours_eod", "eqodds", "gstar_eod")  # their accuracies at test EOd <= 0.03 are cell columns 'at_eod_<m>'
INTERVENTIONS = ("ours_eod", "ours_dp", "gstar_eod", "gstar_dp", "eqodds", "dp_postproc", "dfr", "expgrad_eod", "expgrad_dp")


def gather(p: dict, kind: str) -> pd.DataFrame:
    """One kind of file (a key of ``plan.cell_files``) of every cell of the plan, with the cell's dataset and seed
    as columns (taken from the plan, never parsed back from the file name)."""
    frames = []
    for dataset, seed in plan.cells(p):
        path, cell = Path(plan.cell_files(dataset, seed)[kind]), {"dataset": dataset, "seed": seed}
        if kind == "summary":
            frames.append(pd.DataFrame([cell | read_json(path)]))
        else:
            frames.append(pd.read_csv(path).assign(**cell))
    return pd.concat(frames, ignore_index=True)


def frontier_metrics(fr: pd.DataFrame, drops: dict) -> dict:
    """Claims C1 and C3 from one cell's frontier table (ours, fact, factgstar over eps) and its DP-drop summary."""
    acc = fr.set_index(["frontier", "notion", "eps"])["acc"].sort_index()

    def curve(frontier, notion, upto=EPS_CLAIMS):
        c = acc.loc[frontier, notion]
        return c[c.index <= upto + 1e-9]

    m = {}
    for notion in ("eod", "dp"):
        ours = curve("ours", notion)
        for old in ("fact", "factgstar"):
            gap = ours - curve(old, notion)
            m[f"min_gap_{old}_{notion}"] = float(gap.min())
            m[f"max_gap_{old}_{notion}_eps01"] = float(gap[gap.index <= 0.1 + 1e-9].max())
    ours_eod, ours_dp = acc.loc["ours", "eod"], acc.loc["ours", "dp"]
    m["eod_rise_0_to_03"] = float(ours_eod.loc[EPS_CLAIMS] - ours_eod.loc[0.0])
    m["dp_rise_0_to_03"] = float(ours_dp.loc[EPS_CLAIMS] - ours_dp.loc[0.0])
    m["dp_drop"] = float(ours_dp.loc[1.0] - ours_dp.loc[0.0])
    m["dp_condition"] = float(drops["dp_drop_condition"])
    m["dp_drop_matches_condition"] = float((m["dp_drop"] > 1e-6) == bool(drops["dp_drop_condition"]))
    return m


def point_metrics(pts: pd.DataFrame) -> dict:
    """Claim C2: the intervention test points against the frontier in the ``ours_at_*`` columns, and the old ones."""
    iv = pts[pts.method.isin(INTERVENTIONS)]
    return {"max_excess_over_ours_eod": float((iv.acc - iv.ours_at_eod).max()),
            "max_excess_over_ours_dp": float((iv.acc - iv.ours_at_dp).max()),
            "points_above_fact": float(((iv.acc > iv.fact_at_eod + 1e-6) | (iv.acc > iv.fact_at_dp + 1e-6)).sum()),
            "points_above_factgstar": float(((iv.acc > iv.factgstar_at_eod + 1e-6)
                                             | (iv.acc > iv.factgstar_at_dp + 1e-6)).sum())}


def acc_at_eod_level(pts: pd.DataFrame, method: str, const_acc: float) -> float:
    """A method's test accuracy at test EOd <= EOD_LEVEL (its points mixed with the constant predictor to meet it)."""
    d = pts[pts.method == method]
    return M.acc_at_level(d.acc, d.eod, EOD_LEVEL, const_acc)


def method_metrics(pts: pd.DataFrame, const_acc: float, ours: str = "ours_eod") -> dict:
    """Claim C4: ours (or its control in its place) minus Eq. Odds and minus G-STAR at test EOd <= 0.03."""
    at = {m: acc_at_eod_level(pts, m, const_acc) for m in (ours, "eqodds", "gstar_eod")}
    return {"ours_minus_eqodds": at[ours] - at["eqodds"], "ours_minus_gstar": at[ours] - at["gstar_eod"]}


def aa_columns(cells: pd.DataFrame, fr: pd.DataFrame, summaries: list[dict]) -> pd.DataFrame:
    """The A/A nulls' cell columns ('<null>__<column>', one row per cell of ``cells``, in its order). C1's: the frontier
    table with the comparator frontier of another seed of the same data set in the MS frontier's place
    (claims.stand_in, seeds shifted cyclically), through ``frontier_metrics``; C4's: a comparator's accuracy at test
    EOd <= 0.03 of another seed (each cell's 'at_eod_<method>', measured on its own test set and constant
    predictor) minus the comparator's of this cell, the same difference as ``method_metrics``'. A cell whose data set
    ran one seed only has no independent partner: NaN (judged inconclusive)."""
    key = list(zip(cells.dataset, cells.seed))
    out = pd.DataFrame(index=range(len(cells)))
    for name, columns in AA.items():
        for column, comparator in columns.items():
            if column.startswith("ours_minus_"):
                long = cells.melt(id_vars=["dataset", "seed"], value_vars=[f"at_eod_{m}" for m in C4_METHODS],
                                  var_name="method", value_name="acc")
                swapped = claims_mod.stand_in(long, "method", {"at_eod_ours_eod": f"at_eod_{comparator}"},
                                              seed="seed", keys=["dataset"])
                wide = swapped.pivot(index=["dataset", "seed"], columns="method", values="acc").reindex(
                    columns=["at_eod_ours_eod", f"at_eod_{comparator}"])  # no stand-in rows when no data set has 2 seeds
                diff = wide["at_eod_ours_eod"] - wide[f"at_eod_{comparator}"]
                values = [float(diff.get(k, np.nan)) for k in key]
            else:
                swapped = claims_mod.stand_in(fr, "frontier", {"ours": comparator}, seed="seed",
                                              keys=["dataset", "notion", "eps"])
                values = []
                for s in summaries:
                    cell = swapped[(swapped.dataset == s["dataset"]) & (swapped.seed == s["seed"])]
                    values.append(frontier_metrics(cell, s)[column] if (cell.frontier == "ours").any() else np.nan)
                values = [dict(zip([(s["dataset"], s["seed"]) for s in summaries], values))[k] for k in key]
            out[f"{name}{SEP}{column}"] = values
    return out


def cell_metrics(fr: pd.DataFrame, pts: pd.DataFrame, summ: dict, ff: pd.DataFrame) -> dict:
    """Claim metrics of one (data set, seed)."""
    m = frontier_metrics(fr, summ) | point_metrics(pts) | method_metrics(pts, summ["const_acc"])
    m |= {f"at_eod_{method}": acc_at_eod_level(pts, method, summ["const_acc"]) for method in C4_METHODS}
    m["abs_gap_to_constant"] = abs(summ["lemma2_acc"] - summ["const_acc"])
    top = ff[np.isclose(ff.eta_rel, 1.0) & (ff.eps_eod <= 0.01 + 1e-9)]
    m["min_dp_at_eod001_top_acc"] = float(top.min_dp.min()) if len(top) else float("nan")
    post = fr[(fr.notion == "eod") & (fr.eps <= EPS_CLAIMS + 1e-9)].pivot(index="eps", columns="frontier", values="acc")
    m["postproc_minus_ours_eod"] = float((post["postproc"] - post["ours"]).max())
    return m


def control_metrics(ctrl_fr: pd.DataFrame, pts: pd.DataFrame, summ: dict, fr: pd.DataFrame | None = None) -> dict:
    """The controls' values of one cell, under the same column names as cell_metrics, prefixed '<control>__'.
    Each is computed by the same function as the claim's own values, with the control in place of the mechanism.
    The placebo ``placebo_group_caps`` needs the cell's own frontier table ``fr`` (its old frontiers are kept; only
    the MS frontier is replaced by the group-blind one, from the control's file, and so are the points' ours_at_*)."""
    blind = ctrl_fr[ctrl_fr.frontier == GROUP_BLIND]
    placebo = {}
    if fr is not None and len(blind):
        swapped = pd.concat([fr[fr.frontier != "ours"], blind.assign(frontier="ours")], ignore_index=True)
        placebo = frontier_metrics(swapped, summ) | point_metrics(
            pts.assign(ours_at_eod=pts[f"{GROUP_BLIND}_at_eod"], ours_at_dp=pts[f"{GROUP_BLIND}_at_dp"]))
    controls = {
        "placebo_group_caps": placebo,
        "shuffled_group": frontier_metrics(ctrl_fr[ctrl_fr.frontier != GROUP_BLIND], summ["shuffled_group"]),
        "fact_frontier": point_metrics(pts.assign(ours_at_eod=pts.fact_at_eod, ours_at_dp=pts.fact_at_dp)),
        "shared_bias": method_metrics(pts, summ["const_acc"], ours="ours_shared_eod"),
        "lemma2_without_eod": {"abs_gap_to_constant": abs(summ["lemma2_acc_without_eod"] - summ["const_acc"])},
    }
    return {f"{name}{SEP}{k}": v for name, values in controls.items() for k, v in values.items()}


def as_control(cells: pd.DataFrame, name: str) -> pd.DataFrame:
    """The cell table as the control sees it: its own columns only (a metric the control lacks stays missing)."""
    prefix = f"{name}{SEP}"
    own = {c.removeprefix(prefix): cells[c] for c in cells.columns if c.startswith(prefix)}
    return pd.DataFrame({"dataset": cells.dataset, "seed": cells.seed, **own})


# claim metric -> (data sets it is measured on (None: every cell), cell column); "pooled" metrics sum over cells
MAIN, ALL, MARRIED, ADULT, COMPAS = ("adult", "compas"), None, ("adult_married",), ("adult",), ("compas",)
METRICS = {
    "c1_min_gap_fact_eod": (MAIN, "min_gap_fact_eod"),
    "c1_min_gap_factgstar_eod": (MAIN, "min_gap_factgstar_eod"),
    "c1_max_gap_fact_eod_eps01": (MAIN, "max_gap_fact_eod_eps01"),
    "c1_max_gap_factgstar_eod_eps01": (MAIN, "max_gap_factgstar_eod_eps01"),
    "c2_max_excess_over_ours_eod": (ALL, "max_excess_over_ours_eod"),
    "c2_max_excess_over_ours_dp": (ALL, "max_excess_over_ours_dp"),
    "c2_points_above_fact": ("pooled", "points_above_fact"),
    "c3_eod_rise_0_to_03": (ALL, "eod_rise_0_to_03"),
    "c3_dp_rise_0_to_03_married": (MARRIED, "dp_rise_0_to_03"),
    "c3_dp_drop_matches_condition": (ALL, "dp_drop_matches_condition"),
    "c4_ours_minus_eqodds_adult": (ADULT, "ours_minus_eqodds"),
    "c4_ours_minus_gstar_adult": (ADULT, "ours_minus_gstar"),
    "c5_abs_gap_to_constant": (ALL, "abs_gap_to_constant"),
    "info_c4_ours_minus_eqodds_compas": (COMPAS, "ours_minus_eqodds"),
    "info_c4_ours_minus_gstar_compas": (COMPAS, "ours_minus_gstar"),
    "info_min_dp_at_eod001_top_acc": (ALL, "min_dp_at_eod001_top_acc"),
    "info_postproc_minus_ours_eod": (ALL, "postproc_minus_ours_eod"),
    "info_c1_min_gap_fact_dp": (MAIN, "min_gap_fact_dp"),
    "info_c1_min_gap_factgstar_dp": (MAIN, "min_gap_factgstar_dp"),
    "info_c1_min_gap_factgstar_eod_married": (MARRIED, "min_gap_factgstar_eod"),
}


def measure(cells: pd.DataFrame) -> dict[str, list[float]]:
    """{claim metric: [value per unit]} from the per-cell table; a metric whose column or cells are absent (e.g. the
    smoke profile runs COMPAS only) is left out, so that claims.yaml must say why it is skipped."""
    out = {}
    for metric, (datasets, column) in METRICS.items():
        if column not in cells:
            continue
        if datasets == "pooled":
            out[metric] = [float(cells[column].sum())] if len(cells) else []
        else:
            rows = cells if datasets is None else cells[cells.dataset.isin(datasets)]
            out[metric] = [float(v) for v in rows[column]]
    return {k: v for k, v in out.items() if v}


def main(argv=None):
    step = Step("fairness_pareto", "evaluate", __doc__)
    for name in ("out-frontiers", "out-fairfair", "out-points", "out-cells", "claims"):
        step.parser.add_argument(f"--{name}", type=Path, required=True)
    args, p = step.start(argv)  # p: the plan section (which cells exist)
    fr, ff, pts = gather(p, "frontiers"), gather(p, "fairfair"), gather(p, "points")
    ctrl = gather(p, "control")
    summ = gather(p, "summary")
    rows = []
    for s in summ.to_dict("records"):
        def of(table):
            return table[(table.dataset == s["dataset"]) & (table.seed == s["seed"])]

        rows.append({k: s[k] for k in ("dataset", "seed", "alpha0", "alpha1", "beta", "acc_b", "err0", "err1",
                                       "lemma2_acc", "const_acc", "dp_drop_owncaps")}
                    | {"cap0": s["caps"][0], "cap1": s["caps"][1]} | cell_metrics(of(fr), of(pts), s, of(ff))
                    | control_metrics(of(ctrl), of(pts), s, of(fr)))
    cells = pd.DataFrame(rows).sort_values(["dataset", "seed"], ignore_index=True)
    cells = pd.concat([cells, aa_columns(cells, fr, summ.to_dict("records"))], axis=1)
    controls = {name: measure(as_control(cells, name)) for name in (*CONTROLS, *AA)}
    result = claims_mod.check(CLAIMS, measure(cells), args.profile, args.claims, step.log, controls=controls)
    write_text(args.out_frontiers, fr.to_csv(index=False, float_format="%.8g"))
    write_text(args.out_fairfair, ff.to_csv(index=False, float_format="%.8g"))
    write_text(args.out_points, pts.to_csv(index=False, float_format="%.8g"))
    write_text(args.out_cells, cells.to_csv(index=False, float_format="%.8g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.out_cells, args.claims],
                outputs=[args.out_frontiers, args.out_fairfair, args.out_points, args.out_cells, args.claims])


if __name__ == "__main__":
    main()
