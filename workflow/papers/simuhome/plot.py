"""Figures: the success heat-map (agents x 12 categories, the paper's main table), the room dynamics (one AC
against two, switched off half-way; a dehumidifier; virtual time), and the cost-success plane (mean tool calls
against success, one point per agent and query type, the paper's accuracy-latency figure)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

from . import episodes as E
from . import plan

READS = ("simuhome.plan",)


def fig_table(table: pd.DataFrame):
    import seaborn as sns

    grid = table.pivot(index="agent", columns="category", values="success").reindex(index=list(plan.AGENTS), columns=E.CATEGORIES)
    fig, ax = plotting.subplots(1, 1, width=11, height=3.6)
    sns.heatmap(100 * grid, annot=True, fmt=".0f", vmin=0, vmax=100, cmap="viridis", ax=ax[0][0],
                cbar_kws={"label": "success %"})
    ax[0][0].set(xlabel="", ylabel="", title="Success per category (mean over seeds; paper: GPT-4.1 feasible "
                                              "QT1-4-3 = 98/44/84/50/46/34 %)")
    ax[0][0].set_xticklabels([c.replace("_feasible", "-F").replace("_infeasible", "-I") for c in E.CATEGORIES], rotation=45)
    return fig


def fig_dynamics(traces: pd.DataFrame):
    fig, axes = plotting.subplots(1, 2, width=5, height=3.4)
    seed0 = traces[traces.seed.eq(traces.seed.min())]
    ax = axes[0][0]
    ax.plot(seed0.minute, seed0.temperature_1ac, label="one AC (off at the middle)")
    ax.plot(seed0.minute, seed0.temperature_2ac, label="two ACs")
    ax.set(xlabel="virtual minutes", ylabel="temperature (degC)", title="Cooling adds up, then relaxes")
    ax.legend(fontsize=7)
    ax = axes[0][1]
    ax.plot(seed0.minute, seed0.humidity_dehumidifier, color="C2")
    ax.set(xlabel="virtual minutes", ylabel="humidity (%RH)", title="A dehumidifier at 100 %")
    return fig


def fig_tradeoff(agents: pd.DataFrame):
    import seaborn as sns

    fig, ax = plotting.subplots(1, 1, width=6, height=4)
    sns.scatterplot(agents, x="steps", y="success", hue="agent", style="query_type", s=70, ax=ax[0][0])
    ax[0][0].set(xlabel="mean tool calls per episode", ylabel="success",
                 title="Cost and success per agent and query type (paper: reasoning models 3-5x slower)")
    ax[0][0].legend(fontsize=6, ncol=2)
    return fig


def main(argv=None):
    step = Step("simuhome", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--agents", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=3, required=True)
    args, p = step.start(argv)  # the rule reads simuhome.plan: the seeds whose fidelity traces exist
    traces = pd.concat([pd.read_csv(plan.trace_path(s)).assign(seed=s) for s in p["seeds"]])
    figures = [fig_table(pd.read_csv(args.table)), fig_dynamics(traces), fig_tradeoff(pd.read_csv(args.agents))]
    plotting.save_all(figures, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
