"""Figures: the speed-accuracy plane (the repo's MBPP plot: throughput and accuracy relative to the ARM, one point
per decoder), the main table (accuracy, query tokens per token, tokens per forward and tokens per second per task)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

READS = ()

SHOWN = ["arm", "mdm/s32", "mdm/s16", "refusion", "refusion_plan_only", "refusion_one_slot", "refusion_no_cache"]


def fig_plane(t: pd.DataFrame):
    import seaborn as sns

    per = t.groupby("decoder").agg(accuracy=("accuracy", "mean"), tps=("tokens_per_second", "mean"))
    arm = per.loc["arm"]
    rel = per.assign(speed=per.tps / arm.tps, acc=per.accuracy - arm.accuracy).dropna().reset_index()
    fig, ax = plotting.subplots(1, 1, width=6, height=4)
    ax = ax[0][0]
    sns.scatterplot(rel, x="speed", y="acc", hue="decoder", s=80, ax=ax)
    ax.axvline(1, color="grey", lw=0.5)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set(xscale="log", xlabel="tokens per second relative to the ARM (batch 1, one thread)",
           ylabel="accuracy minus the ARM's (mean of the tasks)",
           title="Speed and accuracy (paper: ReFusion 1.4x the ARM's speed, -0.7 points)")
    ax.legend(fontsize=7)
    return fig


def fig_table(t: pd.DataFrame):
    t = t[t.decoder.isin(SHOWN) | t.decoder.str.startswith("refusion/")]
    rows = [[r.decoder, r.task, f"{100 * r.accuracy:.1f}" if r.accuracy == r.accuracy else "-",
             f"{r.qte_per_token:.1f}" if r.qte_per_token == r.qte_per_token else "-",
             f"{r.tokens_per_forward:.2f}" if r.tokens_per_forward == r.tokens_per_forward else "-",
             f"{r.tokens_per_second:.0f}" if r.tokens_per_second == r.tokens_per_second else "-"] for r in t.itertuples()]
    fig, ax = plotting.subplots(1, 1, width=8.5, height=0.2 * len(rows) + 1.2)
    plotting.draw_table(ax[0][0], rows, ["decoder", "task", "accuracy %", "query tokens / token", "tokens / forward",
                                         "tokens / s"], loc="upper center", cellLoc="center")
    ax[0][0].set_title("Main table (all seeds pooled; paper Table 1: accuracy and TPS per benchmark)", fontsize=9)
    return fig


def main(argv=None):
    step = Step("refusion", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=2, required=True)
    args, _ = step.start(argv)
    t = pd.read_csv(args.table)
    plotting.save_all([fig_plane(t), fig_table(t)], args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
