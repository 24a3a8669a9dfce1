"""Figures: the table mirror (run x mAPre / mARel / mAPar / mAMSR / FAD-mini, the paper's README table, the
reference audio and the controls beside the models); the scaling plot (mAMSR against the thirds of the relation
pairs for fine-tuning and from scratch, the paper's 100/200/300 h figure); mARel per relation class; and example
spectrograms (reference, zero-shot, fine-tuned; seed 0) for a person to judge, and the same examples as audio
(Griffin-Lim from the log-mel: what each spectrogram sounds like, the reference's included)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.io import read_json, read_npz
from workflow.core.step import Step
from workflow.lib import audio

from . import plan as P
from . import records
from . import sounds as S

READS = ("aurelius.plan",)

NAMES = {"reference": "reference audio", "zs": "ZS (general pairs only)", "ft_3": "FT, all of N_max",
         "fs_3": "FS, all of N_max", "ft_1": "FT, 1/3", "fs_1": "FS, 1/3", "ft_2": "FT, 2/3", "fs_2": "FS, 2/3",
         "zs_scrambled": "control: ZS on scrambled captions", "ft_shuffled_3": "control: FT on shuffled captions",
         "ft_scrambled_1": "control: FT from scrambled ZS, 1/3", "ft_scrambled_3": "control: FT from scrambled ZS"}
PAPER = "paper (x 10^-2): TangoFlux 12.38 / 3.34 / 7.28 / 1.77, FAD 6.01; fine-tuned 28.57 / 8.02 / 20.84 / 5.58, FAD 1.29"


def cell(v: pd.Series, scale: float = 100.0) -> str:
    v = scale * v.dropna()
    return "—" if v.empty else (f"{v.mean():.1f} ± {v.std(ddof=1):.1f}" if len(v) > 1 else f"{v.mean():.1f}")


def per_seed(table: pd.DataFrame) -> pd.DataFrame:
    """Per run and seed: the four means over relations and the FAD."""
    return table.groupby(["run", "seed"], as_index=False).agg(
        presence=("presence", "mean"), relation=("relation", "mean"), parsimony=("parsimony", "mean"),
        msr=("msr", "mean"), fad=("fad", "first"))


def fig_table(table: pd.DataFrame, runs: list[str]):
    s = per_seed(table)
    rows = [[NAMES.get(r, r)] + [cell(s[s.run.eq(r)][m]) for m in records.METRICS] + [cell(s[s.run.eq(r)].fad, 1.0)]
            for r in ["reference"] + runs]
    fig, ax = plotting.subplots(1, 1, width=9.0, height=0.3 * len(rows) + 1.2)
    plotting.draw_table(ax[0][0], rows, ["run"] + [records.PAPER_NAMES[m] + " (%)" for m in records.METRICS]
                        + ["FAD-mini"], loc="upper center", cellLoc="center", colWidths=[0.3] + [0.14] * 5)
    ax[0][0].set_title("Relation metrics on the held-out relation prompts, mean ± sd over seeds\n" + PAPER, fontsize=9)
    return fig


def fig_scaling(table: pd.DataFrame):
    import seaborn as sns

    s = per_seed(table)
    s = s[s.run.str.match(r"^(ft|fs|ft_scrambled)_[1-3]$")].copy()
    s["thirds"] = s.run.map(lambda r: P.parse(r)[1])
    s["strategy"] = s.run.map(lambda r: {"ft": "fine-tuned", "fs": "from scratch",
                                         "ft_scrambled": "control: FT from scrambled ZS"}[P.parse(r)[0]])
    s["mAMSR (%)"] = 100 * s.msr
    fig, ax = plotting.subplots(1, 1, width=5.0, height=3.4)
    sns.lineplot(s, x="thirds", y="mAMSR (%)", hue="strategy", marker="o", errorbar="sd", ax=ax[0][0])
    ax[0][0].set(xticks=[1, 2, 3], xticklabels=["1/3", "2/3", "N_max"], xlabel="relation pairs")
    ax[0][0].set_title("Scaling (mean ± sd over seeds)\npaper: fine-tuning saturates near 300 h, from scratch "
                       "keeps improving", fontsize=9)
    return fig


def fig_groups(table: pd.DataFrame):
    import seaborn as sns

    t = table[table.run.isin(["reference", "zs", "ft_3", "fs_3"])].copy()
    t["model"] = t.run.map(NAMES)
    g = t.groupby(["model", "seed", "group"], as_index=False).relation.mean()
    g["mARel (%)"] = 100 * g.relation
    fig, ax = plotting.subplots(1, 1, width=7.5, height=3.4)
    sns.barplot(g, x="group", y="mARel (%)", hue="model", errorbar="sd", ax=ax[0][0])
    ax[0][0].set(xlabel="relation class")
    ax[0][0].set_title("mARel per relation class (mean ± sd over seeds); paper: nested and arity > 1 hardest",
                       fontsize=9)
    return fig


def fig_spectrograms(pairs: list[dict], reference: np.ndarray, generated: dict[str, np.ndarray]):
    n = len(next(iter(generated.values())))
    fig, ax = plotting.subplots(n, 1 + len(generated), width=3.2, height=2.4)
    for i in range(n):
        for j, (name, mel) in enumerate([("reference", reference[i])] + [(k, v[i]) for k, v in generated.items()]):
            a = ax[i][j]
            a.imshow(np.asarray(mel).T, origin="lower", aspect="auto", cmap="magma", vmin=-16, vmax=4,
                     extent=(0, S.CANVAS_S, 0, S.N_MELS))
            a.set_title(f"{NAMES.get(name, name)}" + (f"\n“{pairs[i]['text']}”" if j == 0 else ""), fontsize=7)
            a.set(xlabel="s" if i == n - 1 else "", ylabel="mel bin" if j == 0 else "")
            a.grid(False)  # a grid over an image hides its detail
            a.tick_params(labelbottom=i == n - 1)  # the time axis once, under the last row (titles sit above)
    return fig


def main(argv=None):
    step = Step("aurelius", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--pairs", type=Path, required=True)
    step.parser.add_argument("--mels", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=4, required=True)
    step.parser.add_argument("--sounds", type=Path, nargs="+", required=True, help="P.sound_paths(), in order")
    args, p = step.start(argv)
    table = pd.read_csv(args.table)
    seed = p["seeds"][0]
    generated = {r: read_npz(P.run_path(r, seed))["generated"][:P.EXAMPLES].astype(np.float32) for r in P.LISTEN[1:]}
    test = read_npz(args.mels)["test"][:P.EXAMPLES].astype(np.float32)
    figures = [fig_table(table, list(p["runs"])), fig_scaling(table), fig_groups(table),
               fig_spectrograms(read_json(args.pairs)["test"], test, generated)]
    plotting.save_all(figures, args.figures)
    examples = {"reference": test, **generated}
    for path, (i, source) in zip(args.sounds, [(i, s) for i in range(P.EXAMPLES) for s in P.LISTEN]):
        audio.write_wav(path, S.waveform(examples[source][i]), S.SR)
    step.finish(artifacts=args.figures + args.sounds, outputs=args.figures + args.sounds)


if __name__ == "__main__":
    main()
