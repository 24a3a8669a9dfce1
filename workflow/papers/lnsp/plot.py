"""Figures: the main table (as a figure: exact teacher, Transformer teacher, classic L*) and samples to the last
counterexample of L*_nsp, its shuffled-bits control and classic L* per Dyck language (exact teacher, every seed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

READS = ()

GATE = 0.999   # evaluate.GATE: teachers below it are shaded grey


def truth(v) -> bool:
    return str(v).lower() == "true"


def fmt_int(v) -> str:
    return "—" if pd.isna(v) else f"{int(v)}"


def table_cells(t: pd.DataFrame) -> list[list[str]]:
    rows = []
    for _, r in t.iterrows():
        exact = f"{fmt_int(r.exact_states)}" + ("" if r.exact_runs_ok == r.exact_runs else " ✗")
        if pd.isna(r.teacher_acc):
            teacher = ["—"] * 4
        else:
            eq = "✓" if truth(r.ext_equivalent) else "✗"
            teacher = [f"{100 * r.teacher_acc:.1f} %", f"{fmt_int(r.ext_states)}" + ("" if truth(r.ext_converged) else " (cap)"),
                       eq, fmt_int(r.ext_samples)]
        classic = [fmt_int(r.classic_samples), fmt_int(r.classic_states) + ("" if truth(r.classic_ok) else " ✗")]
        rows.append([r.language, fmt_int(r.target_states), exact, fmt_int(r.exact_mq), fmt_int(r.exact_samples),
                     f"{int(r.exact_runs_ok)}/{int(r.exact_runs)}", *teacher, *classic])
    return rows


def fig_table(t: pd.DataFrame):
    """The paper's main table; a teacher below the accuracy gate is shaded grey, a non-equivalent extraction red."""
    header = ["language", "target\nstates", "L*_nsp\nstates", "MQs", "samples to\nlast cex", "exact\nruns",
              "teacher NSP\nacc. (held-out)", "extracted\nstates", "equiv.", "samples to\nlast cex",
              "classic L*\nsamples", "classic L*\nstates"]
    cells = table_cells(t)
    fig, ax = plotting.subplots(1, 1, width=12.5, height=0.3 * len(cells) + 0.9)
    ax = ax[0][0]
    tab = plotting.draw_table(ax, cells, header, row_scale=1.5, loc="upper center", cellLoc="center",
                              colWidths=[0.09, 0.07, 0.07, 0.07, 0.08, 0.06, 0.11, 0.09, 0.06, 0.08, 0.09, 0.09])
    for (i, j), cell in tab.get_celld().items():
        if i == 0:
            cell.set_height(cell.get_height() * 1.6)  # two-line headers
            continue
        r = t.iloc[i - 1]
        if 6 <= j <= 9 and not pd.isna(r.teacher_acc):
            if r.teacher_acc < GATE:
                cell.set_facecolor("#eeeeee")
            elif not truth(r.ext_equivalent):
                cell.set_facecolor("#f4cccc")
            else:
                cell.set_facecolor("#e3f1e3")
    ax.set_title("Main table. Columns 3-6: L*_nsp with the exact DFA teacher (seed 0; exact runs over all seeds). "
                 "Columns 7-10: Transformer teacher\n(green: passes the 99.9 % accuracy gate and extraction is exact; "
                 "grey: below the gate; (cap): state cap hit). Columns 11-12: classic L*, binary labels, exact teacher,\n"
                 "seed 0 (✗: not the target within the shared query budget). MQs = distinct membership queries.", fontsize=8.5)
    return fig


SERIES = [("nsp", "L*_nsp (NSP labels)"), ("shuf", "L*_nsp, shuffled continuation bits (C4 control)"),
          ("classic", "classic L* (binary labels)")]


def fig_samples(e: pd.DataFrame):
    """Samples to the last counterexample per Dyck language and seed: L*_nsp, its shuffled-bits control and classic
    L* (log y); a run that did not reach the target within the shared budget is drawn as an open marker."""
    d = e[e.family == "dyck"].copy()
    langs = list(dict.fromkeys(d.language))
    fig, ax = plotting.subplots(1, 1, width=7.4, height=4.3)
    ax = ax[0][0]
    pal = plotting.sns.color_palette(n_colors=len(SERIES))
    x = np.arange(len(langs))
    width = 0.8 / len(SERIES)
    for k, (col, label) in enumerate(SERIES):
        offset = (k - (len(SERIES) - 1) / 2) * width
        for i, lang in enumerate(langs):
            s = d[d.language == lang]
            ok = (s[f"{col}_converged"].map(truth) & s[f"{col}_equivalent"].map(truth)).to_numpy()
            y = s[f"{col}_samples_to_last_cex"].clip(lower=0.5).to_numpy()
            jitter = (np.arange(len(s)) - (len(s) - 1) / 2) * 0.05
            xs = x[i] + offset + jitter
            ax.scatter(xs[ok], y[ok], color=pal[k], marker="o", s=26, zorder=3)
            ax.scatter(xs[~ok], y[~ok], facecolors="none", edgecolors=pal[k], marker="o", s=26, zorder=3)
            ax.bar(x[i] + offset, np.median(y), width=width * 0.95, color=pal[k], alpha=0.3)
    targets = d.groupby("language", sort=False).target_states.first()
    ax.set_xticks(x, [f"{lang}\n({targets[lang]} states)" for lang in langs])
    ax.set(yscale="log", ylabel="teacher samples to the last counterexample",
           title=f"Exact teacher, {d.seed.nunique()} seed(s) per language, same query budget (bars: median; 0 drawn at 0.5)")
    ax.title.set_fontsize(9)
    line = plotting.plt.Line2D
    handles = [line([], [], ls="", marker="o", color=pal[k], label=label) for k, (_, label) in enumerate(SERIES)]
    handles.append(line([], [], ls="", marker="o", markerfacecolor="none", markeredgecolor="grey",
                        label="open: not the target within the budget"))
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig


def main(argv=None):
    step = Step("lnsp", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--exact-table", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=2, required=True, help="main table, Dyck samples (.png)")
    args, _ = step.start(argv)
    table, exact = pd.read_csv(args.table), pd.read_csv(args.exact_table)
    plotting.save_all([fig_table(table), fig_samples(exact)], args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
