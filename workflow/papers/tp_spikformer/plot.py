"""Figures: the main table (accuracy, SOPs, energy and time per image at each budget, dense first), Fig. A accuracy
against the fraction of token-blocks processed (dense point; IR, random, IR-drop, magnitude, the ablations and the
inverted control, the placebos), Fig. B accuracy against SOPs per image."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

READS = ()


def label(t: pd.DataFrame) -> pd.Series:
    """criterion, with its mode when not early stopping: ir_drop; ir_skip_other_image (K3's placebo)."""
    suffix = t["mode"].map({"drop": "_drop", "early_stop_other_image": "_skip_other_image"}).fillna("")
    return t.criterion + suffix


def fig_table(t: pd.DataFrame):
    t = t.assign(method=label(t))
    g = t.groupby(["method", "budget"], sort=False).agg(
        cost=("cost", "first"), acc=("accuracy", "mean"), sd=("accuracy", "std"), sops=("sops", "mean"),
        energy=("energy_uj", "mean"), ms=("seconds_per_image", "mean")).reset_index()
    rows = [[r.method, r.budget, f"{r.cost:.2f}", f"{100 * r.acc:.1f} ± {100 * (r.sd if r.sd == r.sd else 0):.1f}",
             f"{r.sops / 1e3:.0f} k", f"{r.energy:.3f}", f"{1e3 * r.ms:.2f}"] for r in g.itertuples()]
    fig, ax = plotting.subplots(1, 1, width=8.5, height=0.2 * len(rows) + 1.2)
    tab = plotting.draw_table(ax[0][0], rows, ["method", "budget", "token-blocks", "accuracy %", "SOPs / image",
                                               "energy µJ", "ms / image"], loc="upper center", cellLoc="center")
    for (i, _), c in tab.get_celld().items():
        if i > 0 and rows[i - 1][0] == "ir":
            c.set_text_props(weight="bold")
    ax[0][0].set_title("Main table: pruned spiking transformer, 16x16 images, 64 tokens (mean ± sd over seeds)\n"
                       "paper: ImageNet, up to 48 % less compute for 0.5-1.5 % accuracy; IR up to +13.8 % over random",
                       fontsize=9)
    return fig


def fig_curve(t: pd.DataFrame, x: str, xlabel: str, title: str):
    import seaborn as sns

    t = t.assign(method=label(t))
    fig, ax = plotting.subplots(1, 1, width=5.8, height=3.8)
    ax = ax[0][0]
    pruned = t[t.criterion.ne("dense")]
    sns.lineplot(pruned, x=x, y="accuracy", hue="method", marker="o", errorbar="sd", ax=ax)
    dense = t[t.criterion.eq("dense")]
    ax.errorbar(dense[x].mean(), dense.accuracy.mean(), yerr=dense.accuracy.std(), fmt="k*", ms=10, label="dense")
    ax.set(xlabel=xlabel, ylabel="test accuracy", title=title)
    ax.legend(fontsize=7)
    return fig


def main(argv=None):
    step = Step("tp_spikformer", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=3, required=True)
    args, _ = step.start(argv)
    t = pd.read_csv(args.table, keep_default_na=False, na_values=[""])
    figures = [fig_table(t), fig_curve(t, "cost", "fraction of token-blocks processed", "Fig. A: accuracy vs token budget"),
               fig_curve(t, "sops", "SOPs per image", "Fig. B: accuracy vs synaptic operations")]
    plotting.save_all(figures, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
