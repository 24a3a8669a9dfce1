"""Figures mirroring the paper: main table (methods x AP/1-HL/1-RL/AUC), ablations, AP vs missing views, view weights, label graphs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

READS = ("scsd.plan",)

METRICS = {"ap": "AP", "one_minus_hl": "1-HL", "one_minus_rl": "1-RL", "auc": "AUC"}
ORDER = ["scsd", "late_fusion_mlp", "dicnet_lite", "br_logreg", "scsd_no_vq", "scsd_no_xrec", "scsd_no_lcw", "scsd_no_sd"]


def own_rate(table: pd.DataFrame) -> pd.DataFrame:
    """The main grid: each data set at the r_V its SCSD main runs used (the rate with the most methods)."""
    counts = table.groupby(["dataset", "missing_view"]).method.nunique().reset_index()
    best = counts.sort_values("method").groupby("dataset").tail(1)
    return table.merge(best[["dataset", "missing_view"]], on=["dataset", "missing_view"])


def main_table(table: pd.DataFrame) -> pd.DataFrame:
    """Rows (data set, method), columns metric: 'mean ± std' over folds (the paper's main table layout)."""
    t = own_rate(table)
    g = t.groupby(["dataset", "method"])[list(METRICS)]
    mean, std = g.mean(), g.std().fillna(0.0)
    out = mean.map(lambda v: f"{v:.3f}") + " ± " + std.map(lambda v: f"{v:.3f}")
    out = out.rename(columns=METRICS).reset_index()
    out["order"] = out.method.map({m: i for i, m in enumerate(ORDER)})
    return out.sort_values(["dataset", "order"]).drop(columns="order")


def fig_table(tab: pd.DataFrame):
    fig, ax = plotting.subplots(1, 1, width=7.5, height=0.28 * len(tab) + 0.8)
    cells = tab.to_numpy().tolist()
    t = plotting.draw_table(ax[0][0], cells, list(tab.columns), loc="center")
    for row, method in enumerate(tab.method, start=1):
        if method == "scsd":
            for col in range(len(tab.columns)):
                t[row, col].set_facecolor("#eaf2fb")
    ax[0][0].set_title("Test metrics, mean ± std over folds (each data set at its own r_V; r_L = 0.5)")
    return fig


def fig_ablations(table: pd.DataFrame):
    d = own_rate(table)
    d = d[(d.dataset == "synth") & d.method.str.startswith("scsd")]
    fig, ax = plotting.subplots(1, 1, width=5)
    order = [m for m in ORDER if m in set(d.method)]
    plotting.sns.barplot(d, x="method", y="ap", order=order, errorbar=None, ax=ax[0][0], color="#9ecae1")
    plotting.sns.stripplot(d, x="method", y="ap", order=order, ax=ax[0][0], color="k", size=4)
    if len(d):
        lo, hi = d.ap.min(), d.ap.max()
        ax[0][0].set_ylim(lo - 0.02, hi + 0.01)
    ax[0][0].set(title="Ablations on synth (bars: mean, dots: folds)", ylabel="test AP", xlabel="")
    ax[0][0].tick_params(axis="x", labelrotation=25)
    return fig


def fig_sweep(table: pd.DataFrame):
    d = table[table.dataset == "synth"]
    rates = d.groupby("method").missing_view.nunique()
    d = d[d.method.isin(rates[rates > 1].index) | (d.missing_view.nunique() == 1)]
    fig, ax = plotting.subplots(1, 1, width=5)
    plotting.sns.lineplot(d, x="missing_view", y="ap", hue="method", marker="o", ax=ax[0][0])
    ax[0][0].set(title="AP vs missing-view rate (synth, r_L = 0.5)", xlabel="missing-view rate r_V", ylabel="test AP")
    return fig


def fig_weights(weights: pd.DataFrame, table: pd.DataFrame):
    rate = own_rate(table).query("dataset == 'synth'").missing_view
    w = weights[(weights.dataset == "synth") & (weights.method == "scsd") & weights.missing_view.isin(set(rate))]
    fig, axes = plotting.subplots(1, 2, width=4.2)
    plotting.sns.scatterplot(w, x="view_val_ap", y="weight", hue="view_name", style="seed", s=60, ax=axes[0][0])
    axes[0][0].set(title="SCSD mean view weight vs single-view AP (tau = 5)", xlabel="view's own classifier, val AP", ylabel="mean fused weight")
    axes[0][0].legend(fontsize=6)
    taus = [c for c in w.columns if c.startswith("weight_tau")]
    if taus:
        long = w.melt(id_vars=["view_name", "seed"], value_vars=taus, var_name="tau", value_name="w")
        long["tau"] = long.tau.str.removeprefix("weight_tau")
        plotting.sns.barplot(long, x="tau", y="w", hue="view_name", errorbar=None, ax=axes[0][1])
        axes[0][1].set(title="the same q_v re-weighted at other temperatures", xlabel="tau", ylabel="mean fused weight")
        axes[0][1].legend(fontsize=6)
    return fig


def fig_graphs(run: dict):
    """S (training labels) beside S_v of the best and the worst view by ||S_v - S||_F."""
    s = np.asarray(run["S"])
    sv = [np.asarray(x) for x in run["S_v"]]
    gaps = [np.linalg.norm(x - s) for x in sv]
    best, worst = int(np.argmin(gaps)), int(np.argmax(gaps))
    fig, axes = plotting.subplots(1, 3, width=3.4)
    vmax = max(s.max(), sv[best].max(), sv[worst].max())
    for ax, mat, title in zip(axes[0], [s, sv[best], sv[worst]],
                              ["S (observed training labels)", f"S_v best: {run['view_names'][best]} (gap {gaps[best]:.3f})",
                               f"S_v worst: {run['view_names'][worst]} (gap {gaps[worst]:.3f})"]):
        plotting.sns.heatmap(mat, vmin=0, vmax=vmax, cmap="viridis", square=True, cbar=False, ax=ax)
        ax.set_title(title, fontsize=8)
    return fig


def scsd_run(cell: dict) -> dict:
    """SCSD's run in a cell file (runs/<dataset>/rv<r>/s<seed>.json), with the cell's view names."""
    return next(r for r in cell["runs"] if r["method"] == "scsd") | {"view_names": cell["view_names"]}


def main(argv=None):
    step = Step("scsd", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--weights", type=Path, required=True)
    step.parser.add_argument("--graphs", type=Path, required=True, help="a cell with an SCSD run (its S and S_v) for the label-graph heatmaps")
    step.parser.add_argument("--main-table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=5, required=True)
    args, _ = step.start(argv)
    table, weights = pd.read_csv(args.table), pd.read_csv(args.weights)
    tab = main_table(table)
    write_text(args.main_table, tab.to_csv(index=False))
    plotting.save_all([fig_table(tab), fig_ablations(table), fig_sweep(table), fig_weights(weights, table), fig_graphs(scsd_run(read_json(args.graphs)))],
                      args.figures)
    step.finish(artifacts=[*args.figures, args.main_table], outputs=[*args.figures, args.main_table])


if __name__ == "__main__":
    main()
