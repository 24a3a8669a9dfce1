"""Figures mirroring the paper: Fig. 2 (EOd-accuracy plane: frontiers + methods' test points), Fig. 3 (DP-accuracy),
Fig. 4 (EOd-DP trade-off at several accuracy levels) and a table of each method's EOd-optimal point (mean over seeds)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import write_text
from workflow.core.step import Step

READS = ()

FRONTIERS = {"ours": ("Ours (MS frontier)", "-", 2.0, "black"), "fact": ("FACT", "--", 1.4, "#7f7f7f"),
             "factgstar": ("FACT + G-STAR", "-.", 1.4, "#8c564b"), "postproc": ("best post-proc. of score (test)", ":", 1.2, "#17becf")}
METHODS = {"ours_eod": "Ours (group bias, EOd)", "ours_dp": "Ours (group bias, DP)", "gstar_eod": "G-STAR (EOd)",
           "gstar_dp": "G-STAR (DP)", "eqodds": "Eq. Odds (fairlearn)", "dp_postproc": "DP post-proc. (fairlearn)",
           "dfr": "DFR", "expgrad_eod": "ExpGrad EOd (fairlearn)", "expgrad_dp": "ExpGrad DP (fairlearn)",
           "ours_shared_eod": "control: ours w/o group bias (EOd)"}
MARKERS = dict(zip(METHODS, "o^sDvPX*h<"))


def plane(frontiers: pd.DataFrame, points: pd.DataFrame, notion: str, xmax: float):
    """One panel per data set (first seed): the four frontiers and every method's test points."""
    datasets = list(dict.fromkeys(frontiers.dataset))
    fig, axes = plotting.subplots(1, len(datasets), width=4.4, height=3.6)
    palette = dict(zip(METHODS, plotting.sns.color_palette("colorblind", len(METHODS))))
    for ax, ds in zip(axes[0], datasets):
        seed = frontiers[frontiers.dataset == ds].seed.min()
        fr = frontiers[(frontiers.dataset == ds) & (frontiers.seed == seed) & (frontiers.notion == notion)]
        for key, (label, ls, lw, color) in FRONTIERS.items():
            c = fr[fr.frontier == key].sort_values("eps")
            ax.plot(c.eps, c.acc, ls=ls, lw=lw, color=color, label=label)
        pts = points[(points.dataset == ds) & (points.seed == seed)]
        for m, label in METHODS.items():
            d = pts[pts.method == m]
            if len(d):
                ax.scatter(d[notion], d.acc, marker=MARKERS[m], s=22, color=palette[m], label=label, alpha=0.85, zorder=3)
        lo = min(fr.acc.min(), pts.acc.min() if len(pts) else 1.0)
        ax.set(xlim=(-0.01, xmax), ylim=(lo - 0.01, fr.acc.max() + 0.01), title=f"{ds} (seed {seed})",
               xlabel={"eod": "EOd = |dTPR| + |dTNR| (test)", "dp": "DP = |dPR| (test)"}[notion], ylabel="test accuracy")
    axes[0][-1].legend(fontsize=6, loc="center left", bbox_to_anchor=(1, 0.5))
    fig.suptitle(f"Accuracy-{notion.upper()} plane: frontiers (lines) and methods' test points", y=1.02)
    return fig


def fig_tradeoff(fairfair: pd.DataFrame):
    datasets = list(dict.fromkeys(fairfair.dataset))
    fig, axes = plotting.subplots(1, len(datasets), width=3.8, height=3.2)
    for ax, ds in zip(axes[0], datasets):
        seed = fairfair[fairfair.dataset == ds].seed.min()
        d = fairfair[(fairfair.dataset == ds) & (fairfair.seed == seed)].replace(np.inf, np.nan)
        for eta, g in d.groupby("eta"):
            ax.plot(g.eps_eod, g.min_dp, marker=".", label=f"Acc >= {eta:.3f}")
        ax.set(title=f"{ds} (seed {seed})", xlabel="EOd bound eps", ylabel="min DP")
        ax.legend(fontsize=6)
    fig.suptitle("Fairness-fairness trade-off: min DP s.t. EOd <= eps, Acc >= eta (z in K)", y=1.02)
    return fig


def eod_optimal_table(frontiers: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per data set and method: the test point with the smallest EOd of each seed, averaged over seeds; the frontiers at 0."""
    rows = []
    for (ds, m), d in points[points.method.isin(METHODS)].groupby(["dataset", "method"]):
        best = d.loc[d.groupby("seed").eod.idxmin()]
        rows.append({"dataset": ds, "method": METHODS[m], "acc": best.acc.mean(), "acc_sd": best.acc.std(ddof=0),
                     "eod": best.eod.mean(), "seeds": len(best)})
    at0 = frontiers[(frontiers.notion == "eod") & (frontiers.eps == 0) & frontiers.frontier.isin(FRONTIERS)]
    for (ds, f), d in at0.groupby(["dataset", "frontier"]):
        rows.append({"dataset": ds, "method": f"frontier: {FRONTIERS[f][0]} at EOd = 0", "acc": d.acc.mean(),
                     "acc_sd": d.acc.std(ddof=0), "eod": 0.0, "seeds": len(d)})
    return pd.DataFrame(rows)


def fig_table(table: pd.DataFrame):
    cells = [[r.dataset, r.method, f"{100 * r.acc:.2f} ± {100 * r.acc_sd:.2f}", f"{r.eod:.3f}", str(r.seeds)]
             for r in table.itertuples()]
    fig, ax = plotting.subplots(1, 1, width=8.5, height=0.22 * len(cells) + 0.8)
    plotting.draw_table(ax[0][0], cells, ["data set", "method / frontier", "test acc % (mean ± sd)", "EOd", "seeds"],
                        loc="center", row_scale=1.1)
    ax[0][0].set_title("EOd-optimal point of each method (smallest test EOd per seed) and the frontiers at EOd = 0")
    return fig


def main(argv=None):
    step = Step("fairness_pareto", "plot", __doc__)
    for name in ("frontiers", "fairfair", "points", "cells"):
        step.parser.add_argument(f"--{name}", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True,
                             help="frontier_eod, frontier_dp, fairness_tradeoff, table_eod_optimal (.png)")
    args, _ = step.start(argv)
    fr, ff, pts = pd.read_csv(args.frontiers), pd.read_csv(args.fairfair), pd.read_csv(args.points)
    table = eod_optimal_table(fr, pts)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    figs = [plane(fr, pts, "eod", 0.5), plane(fr, pts, "dp", 0.5), fig_tradeoff(ff), fig_table(table)]
    plotting.save_all(figs, args.figures)
    step.finish(artifacts=[*args.figures, args.table], outputs=[*args.figures, args.table])


if __name__ == "__main__":
    main()
