"""Figures mirroring the paper: the main table (methods x MAE/RMSE/MAPE @3/6/12/avg, per data set), per-year MAE
per method (the yearly columns of the paper's table), per-year training time and trainable parameters (C2), and
MAE on new / old / night-profile nodes (C3)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

READS = ()

ORDER = ["stbp", "finetune_all", "retrain", "backbone_only", "static", "eac_lite", "trafficstream_lite", "stbp_no_freq",
         "stbp_no_bank_mod"]
PALETTE = dict(zip(ORDER, plotting.sns.color_palette("tab10", len(ORDER))))  # one colour per method in every panel


def methods_in(d: pd.DataFrame) -> list[str]:
    return [m for m in ORDER if m in set(d.method)]


def fig_table(table: pd.DataFrame):
    cols = [f"{m}_{h}" for m in ("mae", "rmse", "mape") for h in ("3", "6", "12", "avg")]
    rows = []
    for ds in sorted(table.dataset.unique()):
        t = table[table.dataset == ds].set_index("method")
        for m in methods_in(t.reset_index()):
            rows.append([ds, m, int(t.loc[m, "seeds"])] + [f"{t.loc[m, c]:.2f}" for c in cols])
    header = ["data", "method", "seeds"] + [c.replace("_", " @") for c in cols]
    fig, ax = plotting.subplots(1, 1, width=14, height=0.3 * len(rows) + 1.0)
    plotting.draw_table(ax[0][0], rows, header, loc="upper center", cellLoc="center",
                        colWidths=[0.07, 0.12, 0.04] + [0.064] * len(cols))
    ax[0][0].set_title("Test metrics averaged over yearly tasks, then seeds (MAPE in %, masked y >= 1)")
    return fig


def fig_years(years: pd.DataFrame):
    datasets = sorted(years.dataset.unique(), key=lambda s: s != "stream")
    fig, axes = plotting.subplots(1, len(datasets), width=4.6)
    for ax, ds in zip(axes[0], datasets):
        d = years[years.dataset == ds]
        plotting.sns.lineplot(d, x="year", y="mae_avg", hue="method", hue_order=methods_in(d), palette=PALETTE, marker="o", ax=ax,
                              errorbar=("pi", 100))
        ax.set(title=f"{ds}: test MAE per yearly task", ylabel="MAE (mean over horizons)", xlabel="year (task)")
        ax.legend(fontsize=6)
    return fig


def fig_cost(years: pd.DataFrame):
    d = years[years.dataset == "stream"]
    fig, axes = plotting.subplots(1, 2, width=4.6)
    order = methods_in(d)
    plotting.sns.barplot(d, x="year", y="cpu_seconds", hue="method", hue_order=order, palette=PALETTE, ax=axes[0][0], errorbar=None)
    axes[0][0].set(title="training CPU time per year (s, one thread)", ylabel="seconds")
    axes[0][0].legend(fontsize=6, ncol=2, loc="upper left")
    plotting.sns.barplot(d, x="year", y="trainable", hue="method", hue_order=order, palette=PALETTE, ax=axes[0][1], errorbar=None, legend=False)
    axes[0][1].set(yscale="log", title="trainable parameters per year (log)", ylabel="parameters")
    return fig


def fig_nodes(years: pd.DataFrame):
    d = years[(years.dataset == "stream") & (years.year > 0)]
    long = d.melt(id_vars=["method", "seed", "year"], value_vars=["mae_old", "mae_new", "mae_night"],
                  var_name="nodes", value_name="MAE").dropna()
    long["nodes"] = long["nodes"].str.removeprefix("mae_")
    fig, ax = plotting.subplots(1, 1, width=7)
    plotting.sns.barplot(long, x="method", y="MAE", hue="nodes", order=methods_in(d), ax=ax[0][0])
    ax[0][0].set(title="incremental years: MAE on old, new and night-profile nodes", xlabel="")
    ax[0][0].tick_params(axis="x", labelrotation=30)
    return fig


def main(argv=None):
    step = Step("stbp", "plot", __doc__)
    step.parser.add_argument("--years", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True)
    args, _ = step.start(argv)
    years, table = pd.read_csv(args.years), pd.read_csv(args.table)
    plotting.save_all([fig_table(table), fig_years(years), fig_cost(years), fig_nodes(years)], args.figures)
    step.finish(artifacts=list(args.figures), outputs=list(args.figures))


if __name__ == "__main__":
    main()
