"""Figures mirroring the paper: Fig. 1 (GR: Inc-Adam vs Det-Adam), Fig. 3 (Gauss: AdamProxy and beta2), Fig. 6 (batch size)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

READS = ()

LABELS = {"inc_adam": "Inc-Adam", "det_adam": "Det-Adam", "adam_proxy": "AdamProxy", "inc_adam_b99": "Inc-Adam β2=0.99",
          "inc_adam_b9999": "Inc-Adam β2=0.9999", "inc_signum": "Inc-Signum", "det_signum": "Det-Signum"}
BATCHES = {"inc": 1, "mb2": 2, "mb5": 5, "det": 10}
OPTIMIZERS = {"adam": "Adam", "signum": "Signum", "gd": "GD (control)"}


def fig_gr(curves: pd.DataFrame):
    """Fig. A: cosine to w_2 and to w_inf vs step on GR data (median and range over data sets)."""
    fig, axes = plotting.subplots(1, 2)
    sel = curves[(curves.dataset.str.startswith("gr")) & curves.algorithm.isin(["inc_adam", "det_adam"])]
    for ax, metric, title in zip(axes[0], ["cos_w2", "cos_winf"], ["cos(w_t, w_2)", "cos(w_t, w_∞)"]):
        d = sel[sel.metric == metric].assign(algorithm=lambda x: x.algorithm.map(LABELS))
        plotting.sns.lineplot(d, x="step", y="value", hue="algorithm", estimator="median", errorbar=("pi", 100), ax=ax)
        ax.set(xscale="log", title=title, ylabel="cosine")
    return fig


def fig_gauss(curves: pd.DataFrame):
    """Fig. B: Gauss data, cosine to w_fp / w_2 / w_inf vs step for AdamProxy and Inc-Adam over beta2."""
    fig, axes = plotting.subplots(1, 3)
    algos = ["adam_proxy", "inc_adam_b99", "inc_adam", "inc_adam_b9999", "det_adam"]
    sel = curves[curves.dataset.str.startswith("gauss") & curves.algorithm.isin(algos)]
    sel = sel.assign(algorithm=sel.algorithm.map(LABELS | {"inc_adam": "Inc-Adam β2=0.999"}))
    for ax, metric, title in zip(axes[0], ["cos_wfp", "cos_w2", "cos_winf"], ["cos(w_t, w_fp)", "cos(w_t, w_2)", "cos(w_t, w_∞)"]):
        plotting.sns.lineplot(sel[sel.metric == metric], x="step", y="value", hue="algorithm", estimator="median",
                              errorbar=None, ax=ax, legend=metric == "cos_wfp")
        ax.set(xscale="log", title=title, ylabel="cosine")
    return fig


def fig_batch(table: pd.DataFrame):
    """Fig. C: final r_2 and r_inf vs batch size, Adam, Signum and their control GD (GR sets of the sweep)."""
    t = table[table.algorithm.str.match(r"^(inc|mb\d+|det)_(adam|signum|gd)$")].copy()
    t["batch"] = t.algorithm.str.split("_").str[0].map(BATCHES)
    t["optimizer"] = t.algorithm.str.split("_").str[1].map(OPTIMIZERS)
    t = t[t.dataset.isin(t[t.batch == 2].dataset)]  # only sets that ran the sweep
    fig, axes = plotting.subplots(1, 2)
    for ax, metric in zip(axes[0], ["r2", "rinf"]):
        plotting.sns.lineplot(t, x="batch", y=metric, hue="optimizer", marker="o", estimator="median",
                              errorbar=("pi", 100), ax=ax)
        ax.set(xscale="log", xticks=list(BATCHES.values()), xticklabels=list(BATCHES.values()),
               title=f"{'r_2' if metric == 'r2' else 'r_∞'} at the end vs batch size", ylabel="margin ratio")
    return fig


def main(argv=None):
    step = Step("adam_implicit_bias", "plot", __doc__)
    step.parser.add_argument("--curves", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=3, required=True, help="fig A, B, C (.png)")
    args, _ = step.start(argv)
    curves, table = pd.read_csv(args.curves), pd.read_csv(args.table)
    plotting.save_all([fig_gr(curves), fig_gauss(curves), fig_batch(table)], args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
