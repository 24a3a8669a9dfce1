"""Figures: the main table (methods x {structural, uniform} accuracy at 99.5 % missing, + full features, per graph),
Fig. A accuracy vs missing rate (the paper's robustness curve), Fig. B link-prediction AUC, Fig. C gamma sensitivity."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

from .tables import at_rate

READS = ("fsd_cap.missing",)

ORDER = ["full", "zero", "mean", "fp", "pcfi_lite", "stage1_only", "cap_no_classes", "cap_label_free", "cap_train_labels_only",
         "fsd_cap_official", "fsd_cap"]
GRAPHS = {"csbm": "CSBM (h=0.8)", "csbm_het": "CSBM (h=0.2)", "mfeat": "UCI digits kNN (real)"}


def empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"{what}: not run in this profile", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def cell(values: pd.Series) -> str:
    v = values.dropna()
    if v.empty:
        return "—"
    return f"{100 * v.mean():.1f} ± {100 * v.std(ddof=1):.1f}" if len(v) > 1 else f"{100 * v.mean():.1f}"


def fig_table(t: pd.DataFrame, rate: float):
    node = at_rate(t, rate, "node")
    link = at_rate(t, rate, "link") if "link" in set(t.task) else node.iloc[:0]
    rows = []
    for ds in [d for d in GRAPHS if d in set(node.dataset)]:
        for m in [m for m in ORDER if m in set(node[node.dataset.eq(ds)].method)]:
            sel = node[node.dataset.eq(ds) & node.method.eq(m)]
            lk = link[link.dataset.eq(ds) & link.method.eq(m)]
            rows.append([GRAPHS[ds], m] + [cell(sel[sel["mask"].eq(k)].test_acc) for k in ("structural", "uniform")]
                        + [cell(lk[lk["mask"].eq(k)].test_auc) for k in ("structural", "uniform")])
    fig, ax = plotting.subplots(1, 1, width=9.5, height=0.22 * len(rows) + 1.2)
    ax = ax[0][0]
    if not rows:
        empty(ax, "main table")
        return fig
    tab = plotting.draw_table(ax, rows, ["graph", "method", "acc structural", "acc uniform", "AUC structural", "AUC uniform"],
                              loc="upper center", cellLoc="center", colWidths=[0.22, 0.2, 0.14, 0.14, 0.14, 0.14])
    for (i, _), c in tab.get_celld().items():
        if i > 0 and rows[i - 1][1] == "fsd_cap":
            c.set_text_props(weight="bold")
    ax.set_title(f"Main table: test accuracy / link AUC (%) at {100 * rate:g} % missing features, mean ± sd over seeds\n"
                 "paper (avg of 5 graphs): FSD-CAP 80.06 / 81.01 %, full features 81.31 %; AUC 91.65 / 92.41 vs 95.06 %",
                 fontsize=9)
    return fig


def fig_missing_rate(t: pd.DataFrame, rate: float):
    """Accuracy vs missing rate for the methods the sweep ran (structural mask, the sweep's seeds), full as a line."""
    node = t[t.task.eq("node") & t.dataset.eq("csbm")]
    swept = node[node.rate.gt(0) & ~np.isclose(node.rate, rate)]  # rows only the sweep makes
    fig, ax = plotting.subplots(1, 1, width=5.5, height=3.6)
    ax = ax[0][0]
    if swept.empty:
        empty(ax, "missing-rate sweep")
        return fig
    import seaborn as sns

    methods_, seeds, kind = set(swept.method), set(swept.seed), swept["mask"].iloc[0]
    sweep = node[node.method.isin(methods_) & node.seed.isin(seeds) & node["mask"].eq(kind)]
    rates = sorted(sweep.rate.unique())
    sweep = sweep.assign(position=sweep.rate.map({r: i for i, r in enumerate(rates)}))
    sns.lineplot(sweep, x="position", y="test_acc", hue="method", marker="o", ax=ax, errorbar=None,
                 hue_order=[m for m in ORDER if m in methods_])
    full = node[node.method.eq("full") & node.seed.isin(seeds)].test_acc.mean()
    ax.axhline(full, color="k", ls="--", lw=1, label="full features")
    ax.set_xticks(range(len(rates)), [f"{100 * r:g} %" for r in rates])
    ax.set(xlabel=f"missing rate ({kind})", ylabel="test accuracy", title="Fig. A: CSBM, accuracy vs missing rate")
    ax.legend(fontsize=7)
    return fig


def fig_link(t: pd.DataFrame, rate: float):
    fig, ax = plotting.subplots(1, 1, width=5.5, height=3.4)
    ax = ax[0][0]
    if "link" not in set(t.task):
        empty(ax, "link prediction")
        return fig
    import seaborn as sns

    link = at_rate(t, rate, "link")
    sns.barplot(link, x="method", y="test_auc", hue="mask", ax=ax, errorbar="sd",
                order=[m for m in ORDER if m in set(link.method)])
    ax.set(ylim=(0.5, 1.0), ylabel="test AUC", title=f"Fig. B: CSBM link prediction (GAE) at {100 * rate:g} % missing")
    ax.axhline(0.9506, color="grey", ls=":", lw=1)
    ax.text(0.02, 0.9506, "paper full 95.06", fontsize=7, va="bottom", transform=ax.get_yaxis_transform())
    return fig


def fig_gamma(t: pd.DataFrame, rate: float):
    node = at_rate(t, rate, "node")
    node = node[node.dataset.eq("csbm")]
    g = node[node.method.isin(["fsd_gamma0.5", "fsd_cap", "fsd_gamma2"])]
    seeds = set(g[g.method.ne("fsd_cap")].seed)
    g = g[g.seed.isin(seeds)].assign(gamma=lambda d: d.method.map({"fsd_gamma0.5": 0.5, "fsd_cap": 1.0, "fsd_gamma2": 2.0}))
    fig, ax = plotting.subplots(1, 1, width=4.5, height=3.4)
    ax = ax[0][0]
    if g.gamma.nunique() < 2:
        empty(ax, "gamma sensitivity")
        return fig
    import seaborn as sns

    sns.lineplot(g, x="gamma", y="test_acc", hue="mask", marker="o", ax=ax, errorbar="sd")
    from matplotlib.ticker import NullFormatter

    ax.set(xscale="log", xticks=[0.5, 1, 2], xticklabels=["0.5", "1", "2"], ylabel="test accuracy", xlabel="γ",
           title="Fig. C: FSD-CAP, fractional exponent γ (mean ± sd over seeds)")
    ax.xaxis.set_minor_formatter(NullFormatter())
    return fig


def main(argv=None):
    step = Step("fsd_cap", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True)
    args, p = step.start(argv)
    t = pd.read_csv(args.table)
    if "test_auc" not in t:
        t["test_auc"] = np.nan
    figures = [fig_table(t, p["rate"]), fig_missing_rate(t, p["rate"]), fig_link(t, p["rate"]), fig_gamma(t, p["rate"])]
    plotting.save_all(figures, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
