"""Figures mirroring the paper's: Fig. A (LP scalability: QD score and Vendi score vs behaviour dimension m, one line
per method, band = sd over seeds), Fig. B (sigma ablation: mean fitness and Vendi vs sigma^2), Fig. C (2-D CVT archive
heatmaps of the evaluation archive, SQUAD vs the ribs baselines), Fig. D (Soft QD -> QD score as sigma -> 0) and the
metrics table (method x benchmark x m)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import read_npz
from workflow.core.step import Step

READS = ()

LABELS = {"squad": "SQUAD", "cma_mae": "CMA-MAE (ribs)", "cma_maega": "CMA-MAEGA (ribs)", "map_elites": "MAP-Elites (ribs)",
          "squad_norep": "SQUAD w/o repulsion (control)", "squad_randnn": "SQUAD, random neighbours (placebo)"}
ORDER = list(LABELS.values())


def fig_scalability(runs: pd.DataFrame):
    """Fig. A: one row per benchmark; QD score, Vendi score, mean fitness vs m."""
    d = runs.assign(method=runs.method.map(LABELS))
    benches = sorted(d.benchmark.unique(), key=lambda b: b != "rastrigin")
    cols = [("qd_score", "QD score (512-cell CVT)"), ("vendi", "Vendi score"), ("mean_f", "mean fitness")]
    fig, axes = plotting.subplots(len(benches), len(cols), width=3.6, height=2.8)
    for i, bench in enumerate(benches):
        for j, (col, label) in enumerate(cols):
            ax = axes[i][j]
            plotting.sns.lineplot(d[d.benchmark == bench], x="m", y=col, hue="method", hue_order=ORDER, style="method",
                                  style_order=ORDER, markers=True, dashes=False, errorbar="sd", ax=ax,
                                  legend=(i == 0 and j == 0))
            ms = sorted(d[d.benchmark == bench].m.unique())
            ax.set(xscale="log", xticks=ms, xticklabels=[str(m) for m in ms], xlabel="behaviour dimension m",
                   ylabel=label, title=f"LP-{bench.capitalize()}")
            ax.minorticks_off()
    if axes[0][0].get_legend():
        plotting.sns.move_legend(axes[0][0], "best", fontsize=7, title=None)
    budget = int(runs.budget.iloc[0])
    fig.suptitle(f"Fig. A: scalability with the behaviour dimension at an equal budget of {budget:,} evaluations")
    fig.tight_layout()
    return fig


def fig_sweep(sweep: pd.DataFrame):
    """Fig. B: the sigma^2 trade-off (band = sd over seeds), beside its control (one kernel width behind every label)."""
    d = sweep.assign(variant=sweep.variant.map({"sigma": "kernel width = σ²", "fixed": "control: fixed kernel width"}))
    fig, axes = plotting.subplots(1, 3, width=3.4, height=2.8)
    for i, (ax, (col, label)) in enumerate(zip(axes[0], [("mean_f", "mean fitness"), ("vendi", "Vendi score"),
                                                          ("qd_score", "QD score")])):
        plotting.sns.lineplot(d, x="sigma2", y=col, hue="variant", marker="o", errorbar="sd", ax=ax, legend=i == 0)
        ax.set(xscale="log", xlabel="σ² label (logit space)", ylabel=label)
    if axes[0][0].get_legend():
        plotting.sns.move_legend(axes[0][0], "best", fontsize=7, title=None)
    fig.suptitle("Fig. B: ablation of SQUAD's kernel width σ² (LP-Rastrigin, m = 4; band = sd over seeds)")
    fig.tight_layout()
    return fig


def voronoi_cells(centroids: np.ndarray) -> list[np.ndarray]:
    """Polygons of the CVT cells clipped to [0,1]^2 (centroids mirrored across the four edges bound every cell)."""
    from scipy.spatial import Voronoi

    c = centroids
    mirrored = np.vstack([c, c * [-1, 1], c * [1, -1], c * [-1, 1] + [2, 0], c * [1, -1] + [0, 2]])
    vor = Voronoi(mirrored)
    return [vor.vertices[vor.regions[vor.point_region[i]]] for i in range(len(c))]


def heatmap_archives(job: dict) -> list[tuple[str, dict]]:
    """(method, {f, b}) of every method in a run job's file, in the figures' method order."""
    return [(m, {"f": job[f"{m}.f"], "b": job[f"{m}.b"]}) for m in sorted(job["methods"].tolist(), key=list(LABELS).index)]


def fig_archives(archives: list[tuple[str, dict]], centroids: np.ndarray):
    """Fig. C: best fitness per cell of the 2-D evaluation archive, one panel per method (grey: empty cell)."""
    from matplotlib.collections import PolyCollection
    from scipy.spatial import cKDTree

    polys = voronoi_cells(centroids)
    tree = cKDTree(centroids)
    fig, axes = plotting.subplots(1, len(archives), width=3.3, height=3.3)
    coll = None
    for ax, (method, z) in zip(axes[0], archives):
        best = np.full(len(centroids), np.nan)
        for cell, f in zip(tree.query(z["b"])[1], z["f"]):
            best[cell] = f if np.isnan(best[cell]) else max(best[cell], f)
        empty = PolyCollection([polys[i] for i in np.flatnonzero(np.isnan(best))], facecolor="#eeeeee", edgecolor="white", lw=0.2)
        full = np.flatnonzero(~np.isnan(best))
        coll = PolyCollection([polys[i] for i in full], array=best[full], cmap="magma", edgecolor="white", lw=0.2)
        coll.set_clim(0, 100)
        ax.add_collection(empty)
        ax.add_collection(coll)
        ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", xlabel="descriptor 1", ylabel="descriptor 2",
               title=f"{LABELS[method]}\nQD {np.nansum(best):.0f}, coverage {len(full) / len(best):.0%}")
        ax.grid(False)
    fig.colorbar(coll, ax=axes[0].tolist(), label="fitness", shrink=0.8)
    fig.suptitle(f"Fig. C: {len(centroids)}-cell CVT evaluation archives, LP-Rastrigin, m = 2")
    return fig


def fig_limit(limit: pd.DataFrame):
    """Fig. D: relative gap between the normalised Soft QD score and the QD score (= sum f) vs sigma."""
    fig, axes = plotting.subplots(1, 1, width=4.6, height=3.2)
    ax = axes[0][0]
    d = limit[limit.variant == "soft_qd"].assign(rel_error=limit.rel_error.clip(lower=1e-16))
    plotting.sns.lineplot(d, x="sigma", y="rel_error", units="config", estimator=None, marker="o", alpha=0.6, ax=ax)
    ax.axhline(0.02, color="k", ls=":", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="σ", ylabel="|S_σ / (2πσ²) / Σf − 1|")
    ax.set_title("Fig. D: Soft QD → QD score as σ → 0 (m = 2, one line per set\nof well-separated solutions; dotted: 2 %)",
                 fontsize=9)
    return fig


def fig_table(summary: pd.DataFrame):
    rows = []
    for _, r in summary.sort_values(["benchmark", "m", "method"]).iterrows():
        pm = lambda c, fmt: f"{r[c]:{fmt}}" + ("" if pd.isna(r.get(c + "_std")) else f" ± {r[c + '_std']:{fmt}}")
        rows.append([f"LP-{r.benchmark}", str(int(r.m)), LABELS[r.method], f"{int(r.n_evals):,}", pm("qd_score", ".0f"),
                     pm("coverage", ".3f"), pm("mean_f", ".1f"), pm("vendi", ".2f"), f"{r.n_solutions:.0f}",
                     f"{r.seconds:.1f}"])
    header = ["task", "m", "method", "evals", "QD score", "coverage", "mean f", "Vendi", "#sol.", "s"]
    fig, ax = plotting.subplots(1, 1, width=11, height=0.22 * len(rows) + 1.0)
    ax = ax[0][0]
    tab = plotting.draw_table(ax, rows, header, loc="upper center", cellLoc="center",
                              colWidths=[0.09, 0.04, 0.15, 0.08, 0.12, 0.12, 0.1, 0.1, 0.06, 0.05])
    best = summary.groupby(["benchmark", "m"]).qd_score.transform("max").eq(summary.qd_score)
    order = summary.sort_values(["benchmark", "m", "method"]).index
    for i, idx in enumerate(order, start=1):
        if best.loc[idx]:
            tab[i, 4].set_text_props(weight="bold")
    ax.set_title("Metrics per method × task × m (mean ± sd over seeds; bold: best QD score)", fontsize=9)
    return fig


def main(argv=None):
    step = Step("soft_qd", "plot", __doc__)
    step.parser.add_argument("--metrics", type=Path, required=True)
    step.parser.add_argument("--summary", type=Path, required=True)
    step.parser.add_argument("--sweep", type=Path, required=True)
    step.parser.add_argument("--limit", type=Path, required=True)
    step.parser.add_argument("--archives", type=Path, required=True, help="the heatmap's run job: every method at m = 2 (.npz)")
    step.parser.add_argument("--centroids", type=Path, required=True, help="archives/m2.npz")
    step.parser.add_argument("--figures", type=Path, nargs=5, required=True, help="Fig. A, B, C, D, table (.png)")
    args, _ = step.start(argv)
    runs, summary = pd.read_csv(args.metrics), pd.read_csv(args.summary)
    archives = heatmap_archives(read_npz(args.archives))
    figs = [fig_scalability(runs), fig_sweep(pd.read_csv(args.sweep)),
            fig_archives(archives, read_npz(args.centroids)["centroids"]), fig_limit(pd.read_csv(args.limit)),
            fig_table(summary)]
    plotting.save_all(figs, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
