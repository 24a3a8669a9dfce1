"""Figures: the main table (clean / Gaussian-noise / FGSM / PGD accuracy per regulariser and training mode), Fig. A
accuracy against the noise level and the PGD budget (one row per training mode, a line per regulariser: the
paper's robustness comparison), Fig. B the toy (recovered bump height against width, ROF against TV-l1, with the
closed forms)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import read_json
from workflow.core.step import Step

READS = ()

ORDER = ["plain", "tv_l2", "tv_l1", "tv_l1_temporal", "tv_l1_detached", "tv_l1_shuffled"]
MODES = {"gn": "Gaussian-noise training", "at": "FGSM adversarial training"}


def cell(values: pd.Series) -> str:
    v = 100 * values.dropna()
    return "—" if v.empty else f"{v.mean():.1f} ± {v.std(ddof=1):.1f}" if len(v) > 1 else f"{v.mean():.1f}"


def columns(t: pd.DataFrame, prefix: str) -> list[str]:
    return sorted((c for c in t.columns if c.startswith(prefix)), key=lambda c: float(c.split("_")[1]))


def fig_table(t: pd.DataFrame):
    cols = ["clean", *columns(t, "gn_"), *columns(t, "fgsm_"), *columns(t, "pgd_"), "robust_score"]
    rows = [[MODES[m], reg] + [cell(g[c]) for c in cols]
            for m in MODES for reg in ORDER if not (g := t[t["mode"].eq(m) & t.reg.eq(reg)]).empty]
    fig, ax = plotting.subplots(1, 1, width=2.2 + 1.05 * len(cols), height=0.24 * len(rows) + 1.2)
    tab = plotting.draw_table(ax[0][0], rows, ["training", "regulariser", *cols], loc="upper center", cellLoc="center")
    for (i, _), c in tab.get_celld().items():
        if i > 0 and rows[i - 1][1] == "tv_l1":
            c.set_text_props(weight="bold")
    ax[0][0].set_title("Main table: test accuracy (%), mean ± sd over seeds (Fashion-MNIST subset, MLP-SNN, T = 4)\n"
                       "paper: CIFAR-10/100 VGG/WRN SNNs, numbers not retrieved; TV-l1 >= TV-l2 by modest margins",
                       fontsize=9)
    return fig


def fig_curves(t: pd.DataFrame):
    import seaborn as sns

    modes = [m for m in MODES if m in set(t["mode"])]
    fig, axes = plotting.subplots(len(modes), 2, width=4.2, height=3.0)
    for row, mode in zip(axes, modes):
        g = t[t["mode"].eq(mode)]
        for ax, prefix, label in ((row[0], "gn_", "Gaussian noise sigma"), (row[1], "pgd_", "PGD-10 eps")):
            cols = ["clean", *columns(g, prefix)]
            long = g.melt(id_vars=["reg", "seed"], value_vars=cols, var_name="level", value_name="accuracy")
            long["level"] = long.level.map(lambda c: 0.0 if c == "clean" else float(c.split("_")[1]))
            sns.lineplot(long, x="level", y="accuracy", hue="reg", hue_order=[r for r in ORDER if r in set(g.reg)],
                         marker="o", errorbar="sd", ax=ax)
            ax.set(xlabel=label, ylabel="test accuracy", title=MODES[mode])
            ax.legend(fontsize=7)
    fig.suptitle("Fig. A: accuracy under noise and attack (mean ± sd over seeds)")
    fig.tight_layout()
    return fig


def fig_toy(toy: dict):
    b = pd.DataFrame(toy["bumps"])
    b = b[b.height.eq(b.height.min())]
    lam = toy["lam"]
    fig, ax = plotting.subplots(1, 1, width=5.5, height=3.6)
    ax = ax[0][0]
    for fidelity, name, marker in (("l2", "ROF (TV-l2)", "o"), ("l1", "TV-l1", "s")):
        g = b[b.fidelity.eq(fidelity)]
        ax.plot(g.width, g.recovered, marker=marker, ls="none", label=f"{name}, solved")
    w = np.linspace(b.width.min(), b.width.max(), 400)
    h = b.height.iloc[0]
    ax.plot(w, np.maximum(h - 2 / (lam * w), 0), color="C0", lw=1, label="ROF closed form h - 2/(lam w)")
    ax.plot(w, np.where(w > 2 / lam, h, 0.0), color="C1", lw=1, ls="--", label="TV-l1 closed form (keep iff w > 2/lam)")
    ax.axvline(2 / lam, color="grey", lw=0.8, ls=":")
    ax.set(xlabel="bump width w", ylabel="recovered height", title=f"Fig. B: toy, lambda = {lam:g}, height {h:g}")
    ax.legend(fontsize=7)
    return fig


def main(argv=None):
    step = Step("mppd_tv", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--toy", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=3, required=True)
    args, _ = step.start(argv)
    t = pd.read_csv(args.table)
    plotting.save_all([fig_table(t), fig_curves(t), fig_toy(read_json(args.toy))], args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
