"""Figures: Fig. 1's mirror (accuracy of top-k margin, random, the best single semi-AR schedule, self-consistency and
HEX; mean and sd over seeds), the collapse figure (fraction of the answer filled with <eos> after each denoising
step, one-block against semi-AR decoders), the scaling curve (vote accuracy and tie rate against the number of
paths) and the hidden experts (accuracy of each fixed block per number of operations)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

from . import plan

READS = ("hex.plan",)


def fig_main(main: pd.DataFrame):
    import seaborn as sns

    fig, ax = plotting.subplots(1, 1, width=7.5, height=3.8)
    ax = ax[0][0]
    sns.barplot(main, y="method", x="accuracy", errorbar="sd", color="tab:blue", ax=ax)
    ax.set(xlim=(0, 1), xlabel="test accuracy (mean ± sd over seeds)", ylabel="",
           title="Fig. 1 mirror: arithmetic chains, G = 32, 2 tokens per step\n"
                 "paper (GSM8K): top-k margin 24.7 %, best semi-AR 76.3 %, HEX 88.1 %")
    return fig


def fig_collapse(eos: pd.DataFrame):
    import seaborn as sns

    fig, ax = plotting.subplots(1, 1, width=5.8, height=3.8)
    ax = ax[0][0]
    sns.lineplot(eos, x="step", y="eos_fraction", hue="decoder", errorbar="sd", ax=ax)
    ax.set(xlabel="denoising step", ylabel="fraction of answer positions = <eos>",
           title="EOS filling during decoding\n(paper: non-semi-AR collapses into [AfterEoT] in 55.8 % of outputs)")
    ax.legend(fontsize=7)
    return fig


def fig_scaling(scaling: pd.DataFrame):
    import seaborn as sns

    fig, axes = plotting.subplots(1, 2, width=9, height=3.6)
    for ax, y, label in ((axes[0][0], "accuracy", "vote accuracy"), (axes[0][1], "tie_rate", "tie rate")):
        sns.lineplot(scaling, x="paths", y=y, marker="o", errorbar="sd", ax=ax)
        ax.set(xlabel="paths in the vote (paper arm)", ylabel=label)
    axes[0][0].set_title("Test-time scaling (paper: 81.96 -> 84.15 % for 5 -> 30 paths)", fontsize=9)
    return fig


def fig_experts(table: pd.DataFrame):
    import seaborn as sns

    fixed = table[table.family.isin(["fixed", "one"])].set_index("decoder")
    grid = fixed[[c for c in fixed.columns if c.startswith("accuracy_ops")]]
    grid.columns = [c.removeprefix("accuracy_ops") for c in grid.columns]
    fig, ax = plotting.subplots(1, 1, width=6, height=0.35 * len(grid) + 1.5)
    sns.heatmap(grid, annot=True, fmt=".2f", vmin=0, vmax=1, cmap="viridis", ax=ax[0][0])
    ax[0][0].set(xlabel="operations in the chain", ylabel="", title="The hidden experts: accuracy per schedule")
    return fig


def main(argv=None):
    step = Step("hex", "plot", __doc__)
    step.parser.add_argument("--main", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--scaling", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True)
    args, p = step.start(argv)
    eos = pd.concat([pd.read_csv(path) for path in plan.eos_paths(p)], ignore_index=True)
    figures = [fig_main(pd.read_csv(args.main)), fig_collapse(eos), fig_scaling(pd.read_csv(args.scaling)),
               fig_experts(pd.read_csv(args.table))]
    plotting.save_all(figures, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
