"""Collect every cell's frontiers and test points into long tables and judge claims.yaml (one unit = a (data set, seed))."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

CLAIMS = Path(__file__).with_name("claims.yaml")
CELL = re.compile(r"^(?P<dataset>[A-Za-z0-9_]+?)_s(?P<seed>[0-9]+)(?:_(?P<rest>[A-Za-z0-9]+))?$")
EOD_LEVEL = 0.03   # C4: accuracy at test EOd <= 0.03 (spec)
EPS_CLAIMS = 0.3   # C1/C3: eps grid 0 : 0.01 : 0.3 (spec)
INTERVENTIONS = ("ours_eod", "ours_dp", "gstar_eod", "gstar_dp", "eqodds", "dp_postproc", "dfr", "expgrad_eod", "expgrad_dp")


def cell_of(path: Path) -> dict:
    """results/.../<dataset>_s<seed>[_<family>].<ext> -> {'dataset', 'seed'}."""
    m = CELL.match(path.stem)
    if not m:
        raise ValueError(f"{path}: expected <dataset>_s<seed>[_<family>] as the file name")
    return {"dataset": m["dataset"], "seed": int(m["seed"])}


def gather(paths, kind: str) -> pd.DataFrame:
    frames = []
    for path in paths:
        if kind == "json":
            frames.append(pd.DataFrame([cell_of(path) | read_json(path)]))
        else:
            stem = Path(path).stem.removesuffix("_fairfair")
            frames.append(pd.read_csv(path).assign(**cell_of(Path(stem))))
    return pd.concat(frames, ignore_index=True)


def best_acc_at(points: pd.DataFrame, method: str, level: float) -> float:
    sel = points[(points.method == method) & (points.eod <= level + 1e-12)]
    return float(sel.acc.max()) if len(sel) else float("nan")


def cell_metrics(fr: pd.DataFrame, pts: pd.DataFrame, summ: dict, ff: pd.DataFrame) -> dict:
    """Claim metrics of one (data set, seed)."""
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
    m["dp_condition"] = float(summ["dp_drop_condition"])
    m["dp_drop_matches_condition"] = float((m["dp_drop"] > 1e-6) == bool(summ["dp_drop_condition"]))
    m["abs_gap_to_constant"] = abs(summ["lemma2_acc"] - summ["const_acc"])
    iv = pts[pts.method.isin(INTERVENTIONS)]
    m["max_excess_over_ours_eod"] = float((iv.acc - iv.ours_at_eod).max())
    m["max_excess_over_ours_dp"] = float((iv.acc - iv.ours_at_dp).max())
    m["points_above_fact"] = float(((iv.acc > iv.fact_at_eod + 1e-6) | (iv.acc > iv.fact_at_dp + 1e-6)).sum())
    m["points_above_factgstar"] = float(((iv.acc > iv.factgstar_at_eod + 1e-6) | (iv.acc > iv.factgstar_at_dp + 1e-6)).sum())
    ours_best = best_acc_at(pts, "ours_eod", EOD_LEVEL)
    eq = pts[pts.method == "eqodds"]
    m["ours_minus_eqodds"] = ours_best - (float(eq.acc.iloc[0]) if len(eq) else float("nan"))
    m["ours_minus_gstar"] = ours_best - best_acc_at(pts, "gstar_eod", EOD_LEVEL)
    top = ff[np.isclose(ff.eta_rel, 1.0) & (ff.eps_eod <= 0.01 + 1e-9)]
    m["min_dp_at_eod001_top_acc"] = float(top.min_dp.min()) if len(top) else float("nan")
    m["postproc_minus_ours_eod"] = float((curve("postproc", "eod") - curve("ours", "eod")).max())
    return m


def measure(cells: pd.DataFrame) -> dict[str, list[float]]:
    """{claim metric: [value per unit]} from the per-cell table."""
    main = cells[cells.dataset.isin(["adult", "compas"])]
    married, adult, compas = (cells[cells.dataset == d] for d in ("adult_married", "adult", "compas"))
    col = lambda df, c: [float(v) for v in df[c]]  # noqa: E731
    out = {
        "c1_min_gap_fact_eod": col(main, "min_gap_fact_eod"),
        "c1_min_gap_factgstar_eod": col(main, "min_gap_factgstar_eod"),
        "c1_max_gap_fact_eod_eps01": col(main, "max_gap_fact_eod_eps01"),
        "c1_max_gap_factgstar_eod_eps01": col(main, "max_gap_factgstar_eod_eps01"),
        "c2_max_excess_over_ours_eod": col(cells, "max_excess_over_ours_eod"),
        "c2_max_excess_over_ours_dp": col(cells, "max_excess_over_ours_dp"),
        "c2_points_above_fact": [float(cells.points_above_fact.sum())],
        "c3_eod_rise_0_to_03": col(cells, "eod_rise_0_to_03"),
        "c3_dp_rise_0_to_03_married": col(married, "dp_rise_0_to_03"),
        "c3_dp_drop_matches_condition": col(cells, "dp_drop_matches_condition"),
        "c4_ours_minus_eqodds_adult": col(adult, "ours_minus_eqodds"),
        "c4_ours_minus_gstar_adult": col(adult, "ours_minus_gstar"),
        "c5_abs_gap_to_constant": col(cells, "abs_gap_to_constant"),
        "info_c4_ours_minus_eqodds_compas": col(compas, "ours_minus_eqodds"),
        "info_c4_ours_minus_gstar_compas": col(compas, "ours_minus_gstar"),
        "info_min_dp_at_eod001_top_acc": col(cells, "min_dp_at_eod001_top_acc"),
        "info_postproc_minus_ours_eod": col(cells, "postproc_minus_ours_eod"),
        "info_c1_min_gap_fact_dp": col(main, "min_gap_fact_dp"),
        "info_c1_min_gap_factgstar_dp": col(main, "min_gap_factgstar_dp"),
        "info_c1_min_gap_factgstar_eod_married": col(married, "min_gap_factgstar_eod"),
    }
    return {k: v for k, v in out.items() if v}


def main(argv=None):
    step = Step("fairness_pareto", "evaluate", __doc__)
    for name in ("frontiers", "fairfair", "summaries", "points"):
        step.parser.add_argument(f"--{name}", type=Path, nargs="+", required=True)
    for name in ("out-frontiers", "out-fairfair", "out-points", "out-cells", "claims"):
        step.parser.add_argument(f"--{name}", type=Path, required=True)
    args, _ = step.start(argv)
    fr, ff, pts = gather(args.frontiers, "csv"), gather(args.fairfair, "csv"), gather(args.points, "csv")
    summ = gather(args.summaries, "json")
    rows = []
    for s in summ.to_dict("records"):
        key = (fr.dataset == s["dataset"]) & (fr.seed == s["seed"])
        pkey = (pts.dataset == s["dataset"]) & (pts.seed == s["seed"])
        fkey = (ff.dataset == s["dataset"]) & (ff.seed == s["seed"])
        rows.append({k: s[k] for k in ("dataset", "seed", "alpha0", "alpha1", "beta", "acc_b", "err0", "err1",
                                       "lemma2_acc", "const_acc", "dp_drop_owncaps")}
                    | {"cap0": s["caps"][0], "cap1": s["caps"][1]} | cell_metrics(fr[key], pts[pkey], s, ff[fkey]))
    cells = pd.DataFrame(rows).sort_values(["dataset", "seed"])
    result = claims_mod.check(CLAIMS, measure(cells), args.profile, args.claims, step.log)
    write_text(args.out_frontiers, fr.to_csv(index=False, float_format="%.8g"))
    write_text(args.out_fairfair, ff.to_csv(index=False, float_format="%.8g"))
    write_text(args.out_points, pts.to_csv(index=False, float_format="%.8g"))
    write_text(args.out_cells, cells.to_csv(index=False, float_format="%.8g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.out_cells, args.claims],
                outputs=[args.out_frontiers, args.out_fairfair, args.out_points, args.out_cells, args.claims])


if __name__ == "__main__":
    main()
