"""Figures mirroring the paper: main table (as a heatmap of MSE gains), gain vs horizon, the stream over time, the gate."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.io import write_text
from workflow.core.step import Step

READS = ()

# negative controls and placebos, not methods of the paper
CONTROLS = ("cosa_stale_gt", "cosa_leak_one_step", "cosa_flip_resid", "cosa_shuffled_ctx", "cosa_input_gcm")


def main_table(table: pd.DataFrame) -> pd.DataFrame:
    """Rows data set x base x horizon, columns method: test MSE (the paper's main table, normalised scale)."""
    return table.pivot_table(index=["dataset", "base", "H"], columns="method", values="mse")


def fig_table(table: pd.DataFrame):
    rel = table.pivot_table(index=["dataset", "base", "H"], columns="method", values="rel_impr") * 100
    rel = rel.drop(columns="no_tta", errors="ignore")
    fig, ax = plotting.subplots(1, 1, width=1.1 * len(rel.columns) + 2, height=0.35 * len(rel) + 1.5)
    # colours clipped at +-50 %: the stale-GT control's losses (down to -5000 %) would flatten every other cell
    plotting.sns.heatmap(rel, annot=True, fmt=".1f", center=0, vmin=-50, vmax=50, cmap="RdYlGn",
                         cbar_kws={"label": "% lower MSE than no TTA (colour clipped at ±50)"}, ax=ax[0][0])
    ax[0][0].set(title="Relative MSE improvement over the frozen base (%, mean over seeds)", xlabel="", ylabel="")
    ax[0][0].tick_params(axis="x", labelrotation=30)
    return fig


def fig_horizon(table: pd.DataFrame):
    datasets = sorted(table.dataset.unique())
    fig, axes = plotting.subplots(1, len(datasets), width=3.6)
    for ax, ds in zip(axes[0], datasets):
        shown = ~table.method.isin(["no_tta", *CONTROLS])  # the controls' losses are in the table figure
        d = table[(table.dataset == ds) & shown].assign(rel_impr=lambda x: 100 * x.rel_impr)
        plotting.sns.lineplot(d, x="H", y="rel_impr", hue="method", style="base", marker="o", ax=ax, legend=ds == datasets[-1])
        ax.axhline(0, color="k", lw=0.8)
        ax.set(title=ds, ylabel="% lower MSE than no TTA", xlabel="horizon H")
    if len(datasets):
        axes[0][-1].legend(fontsize=6, loc="center left", bbox_to_anchor=(1, 0.5))
    return fig


def fig_stream(stream: pd.DataFrame, window: int = 100):
    d = stream[(stream.kind == "window_mse") & stream.method.isin(["no_tta", "tafas_lite", "cosa", "last_error"])].copy()
    d["rolling MSE"] = d.groupby("method").value.transform(lambda v: v.rolling(window, min_periods=1).mean())
    fig, ax = plotting.subplots(1, 1, width=6)
    plotting.sns.lineplot(d, x="index", y="rolling MSE", hue="method", ax=ax[0][0])
    ax[0][0].set(xlabel="test window (stream time; the shift is present from the first test window)",
                 title=f"Rolling test MSE ({window} windows); some windows hold already-observed steps (TAFAS/COSA protocol)")
    return fig


def fig_gate(stream: pd.DataFrame):
    d = stream[(stream.kind == "gate") & stream.method.str.startswith("cosa")]
    fig, ax = plotting.subplots(1, 1, width=6)
    plotting.sns.lineplot(d, x="index", y="value", hue="method", ax=ax[0][0])
    ax[0][0].set(xlabel="batch", ylabel="tanh(g)", title="COSA gate over the test stream")
    return fig


def main(argv=None):
    step = Step("cosa", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--stream", type=Path, required=True)
    step.parser.add_argument("--main-table", type=Path, required=True, help="CSV of the paper-style main table")
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True)
    args, _ = step.start(argv)
    table, stream = pd.read_csv(args.table), pd.read_csv(args.stream)
    write_text(args.main_table, main_table(table).to_csv(float_format="%.4f"))
    plotting.save_all([fig_table(table), fig_horizon(table), fig_stream(stream), fig_gate(stream)], args.figures)
    step.finish(artifacts=[*args.figures, args.main_table], outputs=[*args.figures, args.main_table])


if __name__ == "__main__":
    main()
