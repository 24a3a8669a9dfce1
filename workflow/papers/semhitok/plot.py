"""Figures: the main table (vocabulary, PSNR, SSIM, rFD and probe accuracy per tokenizer and image set, the
continuous upper bound beside them: the paper's Tables 1-2 in one), Fig. A the understanding / reconstruction
trade-off (probe accuracy against PSNR per seed, the joint-loss lambda sweep as a curve: the paper's motivating
figure), Fig. B reconstructions beside the originals (seed 0, every tokenizer, both image sets)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import read_npz
from workflow.core.step import Step

from . import plan, records

READS = ("semhitok.plan",)

NAMES = {"sghc": "SemHiTok (SGHC)", "flat": "B4 flat two-level", "pixel": "B1 pixel-only VQ",
         "semonly": "B2 semantic-only", "random": "control: random routing",
         "coupled": "control: SGHC trained in one stage", "widepixel": "B1 widened (16-d codes)"}


def label(variant: str) -> str:
    return NAMES.get(variant) or f"B3 joint, λ = {variant.split('_', 1)[1]}"


def cell(v: pd.Series, fmt: str) -> str:
    v = v.dropna()
    return "—" if v.empty else (f"{v.mean():{fmt}} ± {v.std(ddof=1):{fmt}}" if len(v) > 1 else f"{v.mean():{fmt}}")


def fig_table(runs: pd.DataFrame, nets: pd.DataFrame, order: list[str]):
    rows = []
    for ds in runs.dataset.unique():
        g = runs[runs.dataset.eq(ds)]
        for v in order:
            r = g[g.variant.eq(v)]
            rows.append([ds, label(v), f"{int(r.vocab.iloc[0])}", cell(r.psnr, ".2f"), cell(r.ssim, ".3f"),
                         cell(r.rfd, ".1f"), cell(100 * r.probe, ".1f"), cell(100 * r.probe_ids, ".1f"),
                         f"{r.seed.nunique()}"])
        n = nets[nets.dataset.eq(ds)]
        rows.append([ds, "continuous teacher features", "—", "—", "—", "—", cell(100 * n.probe_continuous, ".1f"),
                     "—", f"{len(n)}"])
    fig, ax = plotting.subplots(1, 1, width=12, height=0.24 * len(rows) + 1.2)
    header = ["images", "tokenizer", "vocab", "PSNR (dB)", "SSIM", "rFD", "probe acc (%)", "probe on ids (%)", "seeds"]
    tab = plotting.draw_table(ax[0][0], rows, header, loc="upper center", cellLoc="center",
                              colWidths=[0.07, 0.25, 0.06, 0.1, 0.09, 0.09, 0.1, 0.12, 0.06])  # room for the names
    for (i, _), c in tab.get_celld().items():
        if i > 0 and rows[i - 1][1] == NAMES["sghc"]:
            c.set_text_props(weight="bold")
    ax[0][0].set_title("Main table: reconstruction and understanding (probe on codebook features; the spec's probe "
                       "on ids beside it), mean ± sd over seeds (16x16 images, 16 tokens)\n"
                       "paper (ImageNet 256 px): rFID 1.16 SemHiTok vs 2.19 LlamaGen, 1.80 VILA-U; "
                       "POPE 82.5 vs 81.6 VILA-U, 83.8 continuous", fontsize=9)
    return fig


def fig_tradeoff(runs: pd.DataFrame, nets: pd.DataFrame):
    sets = list(runs.dataset.unique())
    fig, axes = plotting.subplots(1, len(sets), width=5.0, height=4.0)
    for ax, ds in zip(axes[0], sets):
        g = runs[runs.dataset.eq(ds)]
        joint = g[g.variant.str.startswith("joint_")].assign(lam=lambda t: t.variant.str.split("_").str[1].astype(float))
        curve = joint.groupby("lam")[["probe", "psnr"]].mean().sort_index()
        ax.plot(curve.probe, curve.psnr, "-o", color="grey", label="B3 joint, λ sweep (mean)")
        for lam, row in curve.iterrows():
            ax.annotate(f"λ={lam:g}", (row.probe, row.psnr), fontsize=7, xytext=(3, 3), textcoords="offset points")
        for v, marker in (("sghc", "*"), ("pixel", "s"), ("semonly", "^"), ("flat", "D"), ("random", "x")):
            r = g[g.variant.eq(v)]
            ax.scatter(r.probe, r.psnr, marker=marker, s=90 if v == "sghc" else 40, label=label(v))
        upper = nets[nets.dataset.eq(ds)].probe_continuous.mean()
        ax.axvline(upper, ls=":", color="black", label="continuous features (probe)")
        ax.set(xlabel="probe accuracy (mean of 3 questions)", ylabel="PSNR (dB)", title=f"{ds} (one point per seed)")
        ax.legend(fontsize=6)
    fig.suptitle("Fig. A: understanding against reconstruction (up and right is better)")
    fig.tight_layout()
    return fig


def fig_reconstructions(samples: dict[str, dict[str, dict]], order: list[str]):
    """Rows: originals, then each tokenizer; columns: 8 test images of each image set (seed 0)."""
    sets = list(samples)
    fig, axes = plotting.subplots(len(order) + 1, len(sets), width=6.0, height=0.85)
    for col, ds in zip(range(len(sets)), sets):
        first = next(iter(samples[ds].values()))
        strips = [("original", first["x"])] + [(label(v), samples[ds][v]["rec"]) for v in order]
        for row, (name, imgs) in enumerate(strips):
            ax = axes[row][col]
            ax.imshow(np.concatenate(list(np.clip(imgs, 0, 1).transpose(0, 2, 3, 1)), axis=1), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=7)
            if row == 0:
                ax.set_title(ds, fontsize=9)
    fig.suptitle("Fig. B: reconstructions beside the originals (test images, seed 0)")
    fig.subplots_adjust(wspace=0.35)  # room for the second column's row labels
    return fig


def main(argv=None):
    step = Step("semhitok", "plot", __doc__)
    step.parser.add_argument("--figures", type=Path, nargs=3, required=True)
    args, p = step.start(argv)
    runs, nets = records.runs_table(p), records.nets_table(p)
    order = plan.variants(p)
    samples = {ds: {v: read_npz(plan.samples_path(ds, p["seeds"][ds][0], v)) for v in order} for ds in p["datasets"]}
    figures = [fig_table(runs, nets, order), fig_tradeoff(runs, nets), fig_reconstructions(samples, order)]
    plotting.save_all(figures, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
