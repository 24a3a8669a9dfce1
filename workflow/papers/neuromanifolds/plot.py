"""Figures: Table A (dimensions, as a figure), Fig. B (singular-value spectra of the Jacobian: generic vs subnetwork vs
CNN zero-padded) and Fig. C (||grad L|| at embedded subnetwork critical points, MLP vs CNN)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import plotting
from workflow.core.step import Step

READS = ()

RANK_TOL = 1e-8     # numerical rank: singular values > 1e-8 s_max (spec 6.3)
GRAD_TOL = 1e-8     # a subnetwork fit is a critical point if ||grad L_sub|| < 1e-8 (spec C5)
FLOOR = 1e-17       # exact zeros drawn here on log axes
POINTS = {"generic": "generic σ, random W", "monomial": "σ = x^r, random W", "dead_neuron": "generic σ, one dead neuron",
          "zero_padded": "generic σ, zero-padded W"}


def fmt(v) -> str:
    return "—" if pd.isna(v) else f"{int(v)}"


def table_cells(t: pd.DataFrame) -> list[list[str]]:
    rows = []
    for _, r in t.iterrows():
        sigma = f"generic, r={int(r.r)}" if r.sigma == "generic" else f"{r.sigma} (paper)"
        generic = fmt(r.rank_generic) + (" ✓" if str(r.certified).lower() == "true" else "")
        mono = "—" if pd.isna(r.rank_monomial) else f"{fmt(r.rank_monomial)} (bound {fmt(r.monomial_bound)})"
        sub = "—" if pd.isna(r.rank_subnetwork) else f"{fmt(r.rank_subnetwork)} ({r.subnetwork})"
        rows.append([r.architecture, sigma, fmt(r.n_params), fmt(r.ambient), generic, mono, sub])
    return rows


def fig_table(t: pd.DataFrame):
    """Table A as a figure; a row whose generic rank falls short of min(#params, ambient) is shaded red."""
    header = ["architecture", "σ", "#params", "ambient", "rank generic", "rank x^r", "rank at subnetwork"]
    cells = table_cells(t)
    fig, ax = plotting.subplots(1, 1, width=10.5, height=0.24 * len(cells) + 1.2)
    ax = ax[0][0]
    tab = plotting.draw_table(ax, cells, header, loc="upper center", cellLoc="center",
                              colWidths=[0.2, 0.14, 0.08, 0.09, 0.11, 0.16, 0.22])
    short = (t.rank_generic < np.minimum(t.n_params, t.ambient)).to_numpy()
    for (i, j), cell in tab.get_celld().items():
        if i == 0:
            continue
        if short[i - 1]:
            cell.set_facecolor("#f4cccc")
        elif t.kind.iloc[i - 1] == "cnn":
            cell.set_facecolor("#f3f7fb")
    ax.set_title("Table A: dimension of the neuromanifold = generic rank of the Jacobian of W ↦ (f_W(x_n))_n\n"
                 "✓ exact rank (mod p) meets the proved upper bound; x^r bound: MLP min(#params − #hidden, ambient), "
                 "CNN Σk − (L − 1); CNN: #params = Σk", fontsize=9)
    return fig


def fig_spectra(s: pd.DataFrame):
    """Fig. B: normalised singular values per architecture (lowest degree), log scale; the dotted line is the rank tolerance."""
    s = s[s.degree == s.degree.min()].assign(sv=lambda d: d.sv.clip(lower=FLOOR), point=lambda d: d.point.map(POINTS))
    archs = list(dict.fromkeys(s.sort_values("kind", ascending=False, kind="stable").arch))
    ncols = 4
    fig, axes = plotting.subplots(-(-len(archs) // ncols), ncols, width=3.3, height=2.6)
    for ax, arch in zip(axes.flat, archs):
        d = s[s.arch == arch]
        plotting.sns.lineplot(d, x="index", y="sv", hue="point", style="point", markers=True, dashes=False,
                              hue_order=list(POINTS.values()), style_order=list(POINTS.values()), ax=ax, legend=False)
        ax.axhline(RANK_TOL, color="k", ls=":", lw=0.8)
        ax.set(yscale="log", ylim=(FLOOR / 3, 3), title=arch, xlabel="index i", ylabel="s_i / s_1")
    for ax in axes.flat[len(archs):]:
        ax.axis("off")
    handles = [plotting.plt.Line2D([], [], color=c, marker=m, label=lab) for lab, c, m in
               zip(POINTS.values(), plotting.sns.color_palette(n_colors=4), ["o", "X", "s", "P"])]
    handles.append(plotting.plt.Line2D([], [], color="k", ls=":", label="rank tolerance 1e-8"))
    fig.legend(handles=handles, loc="lower center", ncol=5, bbox_to_anchor=(0.5, -0.04), frameon=False)
    fig.suptitle(f"Fig. B: singular values of the Jacobian (r = {int(s.degree.min())}; exact zeros drawn at {FLOOR:g})")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def fig_gradients(g: pd.DataFrame):
    """Fig. C: ||grad L_full|| at the embedded subnetwork critical points (converged fits only), MLP vs CNN."""
    d = g[g.converged].assign(grad=lambda x: x.grad_full_norm.clip(lower=FLOOR),
                              network=lambda x: x.kind.str.upper() + " " + x.arch)
    fig, ax = plotting.subplots(1, 1, width=6.5, height=3.4)
    ax = ax[0][0]
    if len(d):
        plotting.sns.histplot(d, x="grad", hue="network", log_scale=True, bins=40, element="step", ax=ax)
        plotting.sns.move_legend(ax, "upper center", bbox_to_anchor=(0.6, 1), fontsize=7, title_fontsize=7)
    ax.axvline(GRAD_TOL, color="k", ls=":", lw=0.8)
    ax.text(GRAD_TOL * 1.6, 0, "||∇L|| = 1e-8 (critical to the left)", rotation=90, ha="left", va="bottom", fontsize=7)
    ax.yaxis.set_major_locator(plotting.plt.MaxNLocator(integer=True))
    mlp = g[g.kind == "mlp"]
    zero = int((mlp.grad_exposed_max == 0).sum())
    ax.set(xlabel="||∇L_full|| at the embedded subnetwork critical point", ylabel="data sets",
           title=f"Fig. C: converged fits (MLP {int(mlp.converged.sum())}/{len(mlp)}, "
                 f"CNN {int(g[g.kind == 'cnn'].converged.sum())}/{int((g.kind == 'cnn').sum())}); "
                 f"dead-neuron components exactly 0 in {zero}/{len(mlp)}")
    ax.title.set_fontsize(8)
    return fig


def main(argv=None):
    step = Step("neuromanifolds", "plot", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--spectra", type=Path, required=True)
    step.parser.add_argument("--gradients", type=Path, required=True)
    step.parser.add_argument("--figures", type=Path, nargs=3, required=True, help="Table A, Fig. B, Fig. C (.png)")
    args, _ = step.start(argv)
    table, spectra, grads = pd.read_csv(args.table), pd.read_csv(args.spectra), pd.read_csv(args.gradients)
    grads["converged"] = grads.converged.astype(str).str.lower().eq("true")
    plotting.save_all([fig_table(table), fig_spectra(spectra), fig_gradients(grads)], args.figures)
    step.finish(artifacts=args.figures, outputs=args.figures)


if __name__ == "__main__":
    main()
