"""Figures: the ISB-mini table (category x model, the paper's InternSpatial-Bench table) and the VSI-mini table
(task x model), both with the majority-answer baseline and chance (a uniform pick among each item's candidates);
the format heat-map (19 formats x model, the paper's format ablation); and QA cards: held-out scenes as each model
saw them (the format's overlay drawn), the question, the truth and every model's answer (seed 0), for a person to
judge."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import read_json, read_npz
from workflow.core.step import Step

from . import plan, qa, records

READS = ("internspatial.plan",)

NAMES = {"prior": "majority answer", "chance": "chance (uniform pick)", "m0": "M0 base", "m1": "M1 spatial-raw",
         "m2": "M2 spatial (19 formats)",
         "m2_shuffled": "control: shuffled answers", "m2_wrongcue": "control: wrong cues",
         "m2_nogeneral": "control: no general QA", "m2_shuffledgeneral": "placebo: shuffled general answers"}


def cell(v: pd.Series) -> str:
    v = 100 * v.dropna()
    return "—" if v.empty else (f"{v.mean():.1f} ± {v.std(ddof=1):.1f}" if len(v) > 1 else f"{v.mean():.1f}")


def fig_table(table: pd.DataFrame, kind: str, regimes: list[str], title: str):
    cats = records.category_means(table, kind)
    order = sorted(cats.category.unique())
    rows = []
    for r in ["prior", "chance"] + regimes:
        g = cats[cats.regime.eq(r)]
        per_seed_avg = g.groupby("seed").accuracy.mean()
        rows.append([NAMES[r]] + [cell(g[g.category.eq(c)].accuracy) for c in order] + [cell(per_seed_avg)])
    fig, ax = plotting.subplots(1, 1, width=2.2 + 1.25 * (len(order) + 1), height=0.3 * len(rows) + 1.2)
    widths = [0.24] + [0.76 / (len(order) + 1)] * (len(order) + 1)  # the model names need the room
    tab = plotting.draw_table(ax[0][0], rows, ["model"] + order + ["average"], loc="upper center", cellLoc="center",
                              colWidths=widths)
    for (i, _), c in tab.get_celld().items():
        if i > 0 and rows[i - 1][0] == NAMES["m2"]:
            c.set_text_props(weight="bold")
    ax[0][0].set_title(title, fontsize=9)
    return fig


def fig_formats(table: pd.DataFrame, regimes: list[str]):
    import seaborn as sns

    isb = table[table.set.eq("isb") & table.regime.isin(regimes)]
    grid = (isb.groupby(["format", "regime"]).accuracy.mean().unstack("regime")
            .reindex(index=list(qa.FORMATS), columns=regimes) * 100)
    fig, ax = plotting.subplots(1, 1, width=1.3 * len(regimes) + 2.5, height=6.0)
    sns.heatmap(grid.rename(columns=NAMES), annot=True, fmt=".0f", cmap="viridis", ax=ax[0][0],
                cbar_kws={"label": "ISB-mini accuracy (%)"})
    ax[0][0].set(xlabel="", ylabel="format (text cue + image)")
    ax[0][0].set_xticklabels([textwrap.fill(t.get_text(), 14) for t in ax[0][0].get_xticklabels()], rotation=0,
                             fontsize=7)
    ax[0][0].set_title("Format heat-map: ISB-mini average per instruction format (mean over seeds)\n"
                       "paper: format expansion narrows the gap between formats", fontsize=9)
    fig.tight_layout()
    return fig


def fig_cards(record: dict, arrays: dict, answers: dict[str, dict], n: int = 8):
    """n ISB test items, alternating natural language on the raw image and an overlay format."""
    test = record["items"]["test"]
    isb = [it for it in test if it["kind"] == "isb"]
    picks = np.linspace(0, len(isb) - 1, min(n, len(isb))).astype(int)  # positions in the runs' ISB answers
    formats = ["nl+raw", "capbox+boxes", "ref+masks", "mark+ids"]
    fig, axes = plotting.subplots(2, (len(picks) + 1) // 2, width=3.0, height=4.6)
    for k, (ax, index) in enumerate(zip(axes.flat, picks)):
        it = isb[index]
        fmt = formats[k % len(formats)]
        scene = record["scenes"][it["scene"]]
        view = qa.image_index(it)
        ann = scene["anns"][it["views"][0]]
        ax.imshow(qa.overlay(arrays["images"][view], arrays["ids"][view], ann, fmt, it["refs"]), interpolation="nearest")
        question = qa.question_text(it, scene["names"], ann, fmt)
        said = "\n".join(f"{r}: {a[f'isb/{fmt}'][index]}" + (" ✓" if a[f"isb/{fmt}"][index] == it["answer"] else "")
                         for r, a in answers.items())
        ax.set_title(f"[{fmt}] {it['category']}\n" + textwrap.fill(question, 40), fontsize=7)
        ax.set_xlabel(f"truth: {it['answer']}\n{said}", fontsize=7)
        ax.set_xticks([])
        ax.set_yticks([])
    for ax in list(axes.flat)[len(picks):]:
        ax.axis("off")
    fig.suptitle("QA cards: held-out scenes as the models saw them (48 px), seed 0", fontsize=10)
    fig.tight_layout()
    return fig


def main(argv=None):
    step = Step("internspatial", "plot", __doc__)
    step.parser.add_argument("--images", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True)
    args, p = step.start(argv)
    table = records.scores_table(p)
    regimes = list(p["regimes"])
    seed = p["seeds"][0]
    answers = {r: read_json(plan.run_path(r, seed))["answers"] for r in ("m0", "m1", "m2")}
    figures = [
        fig_table(table, "isb", regimes, "ISB-mini (single view): accuracy (%) per category, mean ± sd over seeds; "
                  "each item asked in all 19 formats\npaper (InternSpatial-Bench): InternVL2.5-8B 58.9 -> 71.0 with "
                  "InternSpatial; position +25.0, size +20.9, rotation 28.5 -> 33.6"),
        fig_table(table, "vsi", regimes, "VSI-mini (two views): accuracy (%) per task, mean ± sd over seeds\n"
                  "paper (VSI-Bench): 41.6 -> 52.3; the new rotation-angle task remains hard"),
        fig_formats(table, regimes),
        fig_cards(records.read_qa(), read_npz(args.images), answers),
    ]
    plotting.save_all(figures, args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
