"""Frontiers of one (data set, seed) as LPs over the confusion vector (cvxpy): ours (model-specific, K with the paper's
caps), FACT (randomised flipping of z_b), FACT+G-STAR (hull of group ROC points and their flips), the post-processing
frontier of the binned base score, the fairness-fairness trade-off (min DP s.t. EOd <= eps, Acc >= eta) and Lemma 2.

Everything uses the TEST marginals (alpha_a, beta) and the vanilla model's TEST confusion vector z_b, as the paper.

Control ``shuffled_group`` (claims C1 and C3): the same model's test scores and labels with the group attribute
randomly permuted (seeded by the cell's seed) before alpha_a, beta, z_b, the caps (the model's own group accuracies:
group-only models of a random group mean nothing) and the group ROC points are computed. It removes what the claims'
effects rest on, the base-rate gap alpha_0 - alpha_1 and the model's group disparity, while every LP runs as usual.

Placebo ``placebo_group_caps`` (claims C1 and C2): the MS frontier ("ours") with only its group caps made inert: the
caps computed as the control computes them, under the permuted group attribute (so each is about the model's overall
accuracy and says nothing of the group), while the true marginals, z_b, its overall cap, the LP and the eps grid are
kept. Its rows (frontier ``ours_group_blind_caps``) are written to the control's file.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import read_json, read_npz, write_json, write_text
from workflow.core.step import Step

from . import lp
from . import methods as M

READS = ("fairness_pareto.frontiers",)


def eps_grid(step: float, fine_max: float, coarse_step: float) -> np.ndarray:
    """eps = 0 : step : fine_max (claims), then fine_max : coarse_step : 1 (plots)."""
    fine = np.round(np.r_[np.arange(0, fine_max + step / 2, step), fine_max], 10)
    coarse = np.round(np.arange(fine_max + coarse_step, 1.0 + coarse_step / 2, coarse_step), 10)
    grid = np.unique(np.r_[fine, coarse, 1.0])
    return grid[grid <= 1.0]  # eps = 1 (no constraint) is always there: the drops are measured to it


FRONTIERS = ("ours", "ours_owncaps", "fact", "factgstar", "postproc")
GROUP_BLIND = "ours_group_blind_caps"  # the placebo of C1 and C2: the MS frontier with group-blind caps


def frontier_table(s: dict, roc, joint, grid, notions, frontiers=FRONTIERS) -> pd.DataFrame:
    a0, a1, b, zb = s["alpha0"], s["alpha1"], s["beta"], np.asarray(s["z_b"])
    solve = {"ours": lambda eps, notion: lp.ms_frontier(a0, a1, b, eps, notion, z_b=zb, zb_groups=tuple(s["caps"])),
             "ours_owncaps": lambda eps, notion: lp.ms_frontier(a0, a1, b, eps, notion, z_b=zb),
             "fact": lambda eps, notion: lp.fact_frontier(a0, a1, b, eps, zb, notion),
             "factgstar": lambda eps, notion: lp.fact_gstar_frontier(a0, a1, b, eps, roc, notion),
             "postproc": lambda eps, notion: lp.score_frontier(joint, eps, notion)}
    rows = [{"frontier": f, "notion": notion, "eps": float(eps), "acc": solve[f](eps, notion)["acc"]}
            for notion in notions for eps in grid for f in frontiers]
    return pd.DataFrame(rows)


def drop_summary(table: pd.DataFrame, alpha0: float, alpha1: float, group_acc) -> dict:
    """The DP drop of the MS frontier (eps = 1 -> 0), the EOd drop, and the Zhao-Gordon condition of claim C3 on the
    vanilla model's own group errors 1 - group_acc."""
    acc = table.set_index(["frontier", "notion", "eps"])["acc"]
    err = [1 - group_acc[a] for a in (0, 1)]
    return {"err0": err[0], "err1": err[1], "dp_drop_condition": M.dp_drop_condition(err[0], err[1], alpha0, alpha1),
            "dp_drop": float(acc["ours", "dp", 1.0] - acc["ours", "dp", 0.0]),
            "eod_drop": float(acc["ours", "eod", 1.0] - acc["ours", "eod", 0.0])}


def fairfair_table(s: dict, eps_eod, n_levels: int) -> pd.DataFrame:
    """min DP s.t. EOd <= eps, Acc >= eta (K with the paper's caps), eta from the constant predictor up to Acc(z_b)."""
    a0, a1, b, zb = s["alpha0"], s["alpha1"], s["beta"], np.asarray(s["z_b"])
    py1 = a0 * (1 - b) + a1 * b
    const = max(py1, 1 - py1)
    rows = []
    for eta in np.linspace(const, s["acc_b"], n_levels):
        for eps in eps_eod:
            r = lp.fairness_fairness_frontier(a0, a1, b, eps, eta, z_b=zb, zb_groups=tuple(s["caps"]))
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
    step.parser.add_argument("--control", type=Path, required=True, help="frontiers of the shuffled_group control")
    args, p = step.start(argv)
    s, f = read_json(args.base), read_npz(args.features)
    y, g, logit = f["y_test"], f["g_test"], f["logit_test"]
    grid = eps_grid(p["eps_step"], p["eps_max"], p["eps_coarse_step"])
    roc = M.roc_with_base(logit, y, g, s["z_b"], p["roc_thresholds"])
    joint = M.score_bins_joint(logit, y, g, np.unique(np.quantile(logit, np.linspace(0, 1, p["score_bins"] + 1))))
    table = frontier_table(s, roc, joint, grid, p["notions"])
    fairfair = fairfair_table(s, grid[grid <= p["eps_max"] + 1e-9], p["fairfair_levels"])
    a0, a1, b = s["alpha0"], s["alpha1"], s["beta"]
    lemma2 = lp.lemma2_accuracy(a0, a1, b)
    acc = table.set_index(["frontier", "notion", "eps"])["acc"]
    # the control of claim C3/C1: same model, group attribute permuted; claim notions only, no diagnostics
    s_ctrl, g_ctrl = M.shuffled_group_cell(logit, y, g, s["seed"])
    control = frontier_table(s_ctrl, M.roc_with_base(logit, y, g_ctrl, s_ctrl["z_b"], p["roc_thresholds"]), None, grid,
                             ("eod", "dp"), frontiers=("ours", "fact", "factgstar"))
    summary = {"alpha0": a0, "alpha1": a1, "beta": b, "acc_b": s["acc_b"], "caps": s["caps"],
               "caps_group_blind": s_ctrl["caps"],
               **drop_summary(table, a0, a1, s["group_acc_vanilla"]),
               "lemma2_acc": lemma2["acc"], "const_acc": lemma2["const_acc"],
               # control of the Lemma 2 check: the same LP without its EOd = 0 constraint
               "lemma2_acc_without_eod": lp.lemma2_accuracy(a0, a1, b, with_eod=False)["acc"],
               "dp_drop_owncaps": float(acc["ours_owncaps", "dp", 1.0] - acc["ours_owncaps", "dp", 0.0]),
               "shuffled_group": {k: s_ctrl[k] for k in ("alpha0", "alpha1", "beta", "caps")}
               | drop_summary(control, s_ctrl["alpha0"], s_ctrl["alpha1"], s_ctrl["caps"])}
    blind = frontier_table({**s, "caps": s_ctrl["caps"]}, roc, None, grid, ("eod", "dp"), frontiers=("ours",))
    control = pd.concat([control, blind.assign(frontier=GROUP_BLIND)], ignore_index=True)  # placebo_group_caps
    write_text(args.control, control.to_csv(index=False, float_format="%.8g"))
    write_text(args.frontiers, table.to_csv(index=False, float_format="%.8g"))
    write_text(args.fairfair, fairfair.to_csv(index=False, float_format="%.8g"))
    write_json(args.summary, summary)
    step.finish(metrics={k: v for k, v in summary.items() if isinstance(v, (int, float))},
                outputs=[args.frontiers, args.fairfair, args.summary, args.control])


if __name__ == "__main__":
    main()
