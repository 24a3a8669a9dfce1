"""The files of this paper, named once: the rule file asks for them here.

Seven jobs whatever the params (each experiment is one job; its architectures, data sets and seeds run inside it),
so every path is fixed: ``out_path`` of a file under the paper's results folder, ``figure_paths`` of the figures.
"""
from __future__ import annotations

OUT = "results/neuromanifolds"
FIGURES = ("table_a_dimensions", "fig_b_spectra", "fig_c_critical_gradients")


def out_path(name: str) -> str:
    """A result file by its place under the paper's folder: ranks/dimensions.csv, ranks/singular.csv,
    ranks/spectra.npz (E1, E2, E4), fibers/generic.csv and fibers/monomial.csv (E3 and its control),
    critical/mlp.csv and critical/cnn.csv (E5), sparsity/sparsity.csv (E6); the evaluate step's table_a.csv,
    spectra.csv, gradients.csv and claims.json."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
