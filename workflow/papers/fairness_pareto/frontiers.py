"""Frontiers of one (data set, seed) as LPs over the confusion vector (cvxpy): ours (model-specific, K with the paper's
caps), FACT (randomised flipping of z_b), FACT+G-STAR (hull of group ROC points and their flips), the post-processing
frontier of the binned base score, the fairness-fairness trade-off (min DP s.t. EOd <= eps, Acc >= eta) and Lemma 2.

Everything uses the TEST marginals (alpha_a, beta) and the vanilla model's TEST confusion vector z_b, as the paper.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import read_json, read_npz, write_json, write_text
from workflow.core.step import Step

from . import methods as M


def eps_grid(step: float, fine_max: float, coarse_step: float) -> np.ndarray:
    """eps = 0 : step : fine_max (claims), then fine_max : coarse_step : 1 (plots)."""
    fine = np.round(np.r_[np.arange(0, fine_max + step / 2, step), fine_max], 10)
    coarse = np.round(np.arange(fine_max + coarse_step, 1.0 + coarse_step / 2, coarse_step), 10)
    grid = np.unique(np.r_[fine, coarse, 1.0])
    return grid[grid <= 1.0]  # eps = 1 (no constraint) is always there: the drops are measured to it


def roc_with_base(logit, y, g, z_b, n_thresholds: int) -> list:
    """Group ROC points of the base score, with z_b's own group points added (its 0 threshold may fall between)."""
    roc = M.roc_points(logit, y, g, n_thresholds)
    return [np.unique(np.vstack([roc[a], [[z_b[2 * a], z_b[2 * a + 1]]]]), axis=0) for a in (0, 1)]


def frontier_table(s: dict, roc, joint, grid, notions) -> pd.DataFrame:
    a0, a1, b, zb = s["alpha0"], s["alpha1"], s["beta"], np.asarray(s["z_b"])
    rows = []
    for notion in notions:
        for eps in grid:
            acc = {"ours": M.ms_frontier(a0, a1, b, eps, notion, z_b=zb, zb_groups=tuple(s["caps"]))["acc"],
                   "ours_owncaps": M.ms_frontier(a0, a1, b, eps, notion, z_b=zb)["acc"],
                   "fact": M.fact_frontier(a0, a1, b, eps, zb, notion)["acc"],
                   "factgstar": M.fact_gstar_frontier(a0, a1, b, eps, roc, notion)["acc"],
                   "postproc": M.score_frontier(joint, eps, notion)["acc"]}
            rows += [{"frontier": f, "notion": notion, "eps": float(eps), "acc": v} for f, v in acc.items()]
    return pd.DataFrame(rows)


def fairfair_table(s: dict, eps_eod, n_levels: int) -> pd.DataFrame:
    """min DP s.t. EOd <= eps, Acc >= eta (K with the paper's caps), eta from the constant predictor up to Acc(z_b)."""
    a0, a1, b, zb = s["alpha0"], s["alpha1"], s["beta"], np.asarray(s["z_b"])
    py1 = a0 * (1 - b) + a1 * b
    const = max(py1, 1 - py1)
    rows = []
    for eta in np.linspace(const, s["acc_b"], n_levels):
        for eps in eps_eod:
            r = M.fairness_fairness_frontier(a0, a1, b, eps, eta, z_b=zb, zb_groups=tuple(s["caps"]))
            rows.append({"eta": float(eta), "eta_rel": float((eta - const) / max(s["acc_b"] - const, 1e-12)),
                         "eps_eod": float(eps), "min_dp": r["dp"]})
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("fairness_pareto", "frontiers", __doc__)
    step.parser.add_argument("--features", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, required=True, help="train_base summary json")
    step.parser.add_argument("--frontiers", type=Path, required=True)
    step.parser.add_argument("--fairfair", type=Path, required=True)
    step.parser.add_argument("--summary", type=Path, required=True)
    args, p = step.start(argv)
    s, f = read_json(args.base), read_npz(args.features)
    y, g, logit = f["y_test"], f["g_test"], f["logit_test"]
    grid = eps_grid(p["eps_step"], p["eps_max"], p["eps_coarse_step"])
    roc = roc_with_base(logit, y, g, s["z_b"], p["roc_thresholds"])
    joint = M.score_bins_joint(logit, y, g, np.unique(np.quantile(logit, np.linspace(0, 1, p["score_bins"] + 1))))
    table = frontier_table(s, roc, joint, grid, p["notions"])
    fairfair = fairfair_table(s, grid[grid <= p["eps_max"] + 1e-9], p["fairfair_levels"])
    a0, a1, b = s["alpha0"], s["alpha1"], s["beta"]
    err = [1 - x for x in s["group_acc_vanilla"]]
    lemma2 = M.lemma2_accuracy(a0, a1, b)
    acc = table.set_index(["frontier", "notion", "eps"])["acc"]
    summary = {"alpha0": a0, "alpha1": a1, "beta": b, "acc_b": s["acc_b"], "caps": s["caps"], "err0": err[0],
               "err1": err[1], "dp_drop_condition": M.dp_drop_condition(err[0], err[1], a0, a1),
               "lemma2_acc": lemma2["acc"], "const_acc": lemma2["const_acc"],
               "dp_drop": float(acc["ours", "dp", 1.0] - acc["ours", "dp", 0.0]),
               "dp_drop_owncaps": float(acc["ours_owncaps", "dp", 1.0] - acc["ours_owncaps", "dp", 0.0]),
               "eod_drop": float(acc["ours", "eod", 1.0] - acc["ours", "eod", 0.0])}
    write_text(args.frontiers, table.to_csv(index=False, float_format="%.8g"))
    write_text(args.fairfair, fairfair.to_csv(index=False, float_format="%.8g"))
    write_json(args.summary, summary)
    step.finish(metrics={k: v for k, v in summary.items() if isinstance(v, (int, float))},
                outputs=[args.frontiers, args.fairfair, args.summary])


if __name__ == "__main__":
    main()
