"""Figures: the paper's Fig. 1 (accuracy per task for zero-shot and the nl-, mixed- and code-finetuned models; here
zero-shot, nl and py) and its analysis axes: structural against semantic perturbations, the explicitness ladder
(code, pseudocode, flowchart, numbered steps, prose), accuracy against density rho, and interpretability."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

from . import plan

READS = ("code_reasoning.plan",)

AXES = {  # panel -> the variants it compares (in order)
    "structure vs semantics": ["py", "py_nows", "py_kwrand", "py_varren", "py_nocomm", "py_commswap"],
    "explicitness": ["py", "pseudo", "flowchart", "nlsteps", "nl"],
    "interpretability": ["py", "py_commmislead", "fictional", "py_kwrand", "py_mismatch"],
}


def fig_main(t: pd.DataFrame):
    import seaborn as sns

    shown = t[t.variant.isin([plan.ZEROSHOT, "nl", "py"])]
    fig, ax = plotting.subplots(1, 1, width=6, height=3.6)
    sns.barplot(shown, x="task", y="accuracy", hue="variant", hue_order=[plan.ZEROSHOT, "nl", "py"], ax=ax[0][0])
    ax[0][0].set(ylim=(0, 1), title="Finetuning on code vs prose (paper Qwen3-4B math: 0.553 / 0.661 / 0.745)")
    return fig


def fig_axes(t: pd.DataFrame):
    import seaborn as sns

    fig, axes = plotting.subplots(1, 4, width=4.2, height=3.6)
    for ax, (title, variants) in zip(axes[0][:3], AXES.items()):
        shown = t[t.variant.isin(variants) & t.task.isin(["math", "code"])]
        sns.barplot(shown, x="variant", y="accuracy", hue="task", order=[v for v in variants if v in set(t.variant)], ax=ax)
        ax.set(ylim=(0, 1), title=title, xlabel="")
        ax.tick_params(axis="x", rotation=60)
    avg = t[t.task.isin(["math", "code"])].groupby("variant", as_index=False).agg(accuracy=("accuracy", "mean"),
                                                                                  rho=("rho", "first"))
    ax = axes[0][3]
    sns.scatterplot(avg.dropna(), x="rho", y="accuracy", ax=ax)
    for r in avg.dropna().itertuples():
        ax.annotate(r.variant, (r.rho, r.accuracy), fontsize=6)
    ax.set(xlabel="rho (characters vs py)", ylabel="mean of math and code accuracy", title="density")
    return fig


def main(argv=None):
    step = Step("code_reasoning", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=2, required=True)
    args, _ = step.start(argv)
    t = pd.read_csv(args.table)
    plotting.save_all([fig_main(t), fig_axes(t)], args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
