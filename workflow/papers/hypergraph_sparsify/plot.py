"""Figures of the spec: Fig. A memory vs m, Fig. B error vs memory (Pareto), Fig. C sliding window, and the method table."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import write_text
from workflow.core.step import Step

READS = ()

ORDER = ["store-all", "uniform", "offline-is", "online-exact", "online-sketch", "stream", "mr-only",
         "uniform-online", "online-shuffled"]
CONTROLS = {"uniform-online", "online-shuffled"}  # negative controls, run at m_large only
PALETTE = {"store-all": "black", "uniform": "tab:gray", "offline-is": "tab:purple", "online-exact": "tab:blue",
           "online-sketch": "tab:cyan", "stream": "tab:red", "mr-only": "tab:orange", "uniform-online": "silver",
           "online-shuffled": "tab:brown"}  # one colour per method, every figure


def families(t: pd.DataFrame) -> list[str]:
    """Families in rank order (G, H3, H5)."""
    return list(t.drop_duplicates("family").sort_values(["r", "family"]).family)


def m_large(t: pd.DataFrame) -> int:
    """The headline m: the one that was also run with the bridges last."""
    bl = t[t.order == "bridges_last"]
    return int(bl.m.iloc[0]) if len(bl) else int(t.m.max())


def with_eps(t: pd.DataFrame) -> pd.DataFrame:
    """eps = the exact spectral eps for graphs, eps_hat (a lower bound) for hypergraphs."""
    return t.assign(eps=np.where(t.r == 2, t.eps_exact, t.eps_hat))


def fig_space(t: pd.DataFrame, space: pd.DataFrame):
    """Fig. A: top, peak stored hyperedges vs m (log-log; median and range over seeds); bottom, stored hyperedges
    over the longest stream (first seed): linear for store-all, ~log for online, a saw-tooth for merge-and-reduce."""
    fams = families(t)
    d = t[(t.order == "random") & ~t.method.isin({"uniform"} | CONTROLS)]
    hue = [mt for mt in ORDER if mt in set(d.method)]
    fig, axes = plotting.subplots(2, len(fams), width=3.8, height=3.0, layout="constrained")
    for ax, fam in zip(axes[0], fams):
        plotting.sns.lineplot(d[d.family == fam], x="m", y="peak_stored", hue="method", hue_order=hue, palette=PALETTE, marker="o",
                              estimator="median", errorbar=("pi", 100), ax=ax, legend=fam == fams[-1])
        ax.set(xscale="log", yscale="log", title=f"{fam} (r = {int(d[d.family == fam].r.iloc[0])})",
               xlabel="stream length m", ylabel="peak stored hyperedges")
        ms = sorted(d.m.unique())
        ax.set_xticks(ms, [f"{m / 1000:g}k" for m in ms])
        ax.xaxis.set_minor_formatter(plotting.plt.NullFormatter())
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5), title="method (uniform = stream's peak)")
    s = space[(space.order == "random") & (space.m == space.m.max()) & ~space.method.isin({"uniform"} | CONTROLS)]
    s = s[s.seed == s.seed.min()]
    for ax, fam in zip(axes[1], fams):
        plotting.sns.lineplot(s[s.family == fam], x="t", y="stored", hue="method", hue_order=hue, palette=PALETTE, ax=ax, legend=False)
        ax.set(yscale="log", xlabel=f"arrivals t (m = {int(s.m.max()):,}, seed {int(s.seed.min())})",
               ylabel="stored hyperedges")
    fig.suptitle("Fig. A  Memory vs stream length (random order)")
    return fig


def fig_pareto(t: pd.DataFrame):
    """Fig. B: error vs memory at m_large, every run (seeds, reservoir seeds), both orders."""
    fams, ml = families(t), m_large(t)
    d = with_eps(t[t.m == ml])
    hue = [mt for mt in ORDER if mt in set(d.method)]
    fig, axes = plotting.subplots(1, len(fams), width=3.8, height=3.4, layout="constrained")
    for ax, fam in zip(axes[0], fams):
        plotting.sns.scatterplot(d[d.family == fam], x="peak_frac", y="eps", hue="method", hue_order=hue, palette=PALETTE, style="order",
                                 style_order=["random", "bridges_last"], s=40, alpha=0.8, ax=ax, legend=fam == fams[-1])
        graph = bool((d[d.family == fam].r == 2).all())
        ax.set(xscale="log", title=fam, xlabel="peak memory / m",
               ylabel="exact spectral ε" if graph else "ε̂ (lower bound on ε)")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5))
    fig.suptitle(f"Fig. B  Error vs memory at m = {ml:,}")
    return fig


def fig_sliding(q: pd.DataFrame, mem: pd.DataFrame):
    """Fig. C: sliding window, eps_hat at the query times and stored / W over time."""
    fig, axes = plotting.subplots(1, 2, width=4.8, height=3.4, layout="constrained")
    label = lambda df: df.assign(instance=df.family + " s" + df.seed.astype(str))  # noqa: E731
    hue = sorted(label(q).instance.unique(), key=lambda s: (len(s.split()[0]), s))
    plotting.sns.lineplot(label(q), x="T", y="eps_hat", hue="instance", hue_order=hue, marker="o", ax=axes[0][0])
    axes[0][0].axhline(0.3, color="k", ls="--", lw=0.8, label="C5 criterion")
    axes[0][0].set(xlabel="query time T (arrivals)", ylabel="ε̂ of the window [T − W, T)", title="window error")
    plotting.sns.lineplot(label(mem), x="t", y="stored_frac_window", hue="instance", hue_order=hue, ax=axes[0][1],
                          legend=False)
    plotting.sns.scatterplot(label(q), x="T", y="stored_frac_window", hue="instance", hue_order=hue, ax=axes[0][1],
                             legend=False, s=25)
    axes[0][1].axhline(0.5, color="k", ls="--", lw=0.8)
    axes[0][1].set(xlabel="arrivals t", ylabel="stored / W", ylim=(0, None),
                   title="memory after each reverse pass (dots: queries);\nnew arrivals are held unthinned until the next pass")
    axes[0][0].legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    W, m = int(q.window.iloc[0]), int(q.m.iloc[0])
    fig.suptitle(f"Fig. C  Sliding window (m = {m:,}, W = {W:,})")
    return fig


def main_table(t: pd.DataFrame) -> pd.DataFrame:
    """The paper-style comparison at m_large, random order: mean over seeds (and reservoir seeds)."""
    d = t[(t.m == m_large(t)) & (t.order == "random")]
    cols = ["stored", "peak_stored", "peak_frac", "bits", "peak_bits", "eps_hat", "eps_exact", "min_cut_ratio", "time_s"]
    tab = d.groupby(["family", "method"])[cols].mean().reset_index()
    tab["method"] = pd.Categorical(tab.method, [mt for mt in ORDER if mt in set(tab.method)], ordered=True)
    rank = d.drop_duplicates("family").set_index("family").r
    return tab.assign(r=tab.family.map(rank)).sort_values(["r", "family", "method"]).drop(columns="r")


def fig_table(tab: pd.DataFrame, ml: int):
    shown = pd.DataFrame({"family": tab.family, "method": tab.method.astype(str),
                          "stored": tab.stored.map("{:,.0f}".format), "peak memory": tab.peak_stored.map("{:,.0f}".format),
                          "peak / m": tab.peak_frac.map("{:.1%}".format), "peak kbit": (tab.peak_bits / 1e3).map("{:,.0f}".format),
                          "ε̂": tab.eps_hat.map("{:.3f}".format), "ε exact (G)": tab.eps_exact.map(lambda v: "—" if np.isnan(v) else f"{v:.3f}"),
                          "min-cut ratio": tab.min_cut_ratio.map(lambda v: "—" if np.isnan(v) else f"{v:.3f}")})
    fig, ax = plotting.subplots(1, 1, width=8.5, height=0.26 * len(shown) + 0.9)
    ax = ax[0][0]
    tbl = plotting.draw_table(ax, shown.values, list(shown.columns), loc="center", cellLoc="right", colLoc="right")
    tbl.auto_set_column_width(col=list(range(shown.shape[1])))
    ax.set_title(f"Methods at m = {ml:,} (random order; mean over seeds). Min cut exact for r ≤ 3 only.", fontsize=9)
    return fig


def main(argv=None):
    step = Step("hypergraph_sparsify", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--space", type=Path, required=True)
    step.parser.add_argument("--sliding", type=Path, required=True)
    step.parser.add_argument("--sliding-trace", type=Path, required=True)
    step.parser.add_argument("--main-table", type=Path, required=True, help="CSV of the paper-style method table")
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True, help="Fig. A, B, C, table (.png)")
    args, _ = step.start(argv)
    t, space = pd.read_csv(args.table), pd.read_csv(args.space)
    q, mem = pd.read_csv(args.sliding), pd.read_csv(args.sliding_trace)
    tab = main_table(t)
    write_text(args.main_table, tab.to_csv(index=False, float_format="%.6g"))
    plotting.save_all([fig_space(t, space), fig_pareto(t), fig_sliding(q, mem), fig_table(tab, m_large(t))], args.figures)
    step.finish(artifacts=[*args.figures, args.main_table], outputs=[*args.figures, args.main_table])


if __name__ == "__main__":
    main()
