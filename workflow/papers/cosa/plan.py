"""The jobs of this paper, as pure functions of its data sets' params section (params.yaml: cosa.datasets).

The rule file builds its job lists from these, and the evaluate step finds the same files through them: no
command line grows with the number of cells. A seed is one unit of the pipeline: the generator's data
(synthetic sets), the base's training, the adapters' initialisation.
"""
from __future__ import annotations

OUT = "results/cosa"
GENERATORS = ("ett_like", "ett_like_mixed")  # sources made by datasets.ett_like (no catalog file)


def cells(datasets: dict) -> list[tuple[str, str, int, int]]:
    """Every (data set, base, horizon, seed) cell: one frozen base and one TTA stream each."""
    return [(ds, base, h, s) for ds, d in datasets.items() for base in d["bases"] for h in d["horizons"]
            for s in d["seeds"]]


def data_path(dataset: str, seed) -> str:
    """A data set's splits at one seed (the generator's draw for a synthetic set)."""
    return f"{OUT}/data/{dataset}_s{seed}.npz"


def base_path(dataset: str, base: str, horizon, seed, ext: str = "pt") -> str:
    """A cell's frozen base model (.pt) or its training summary (.json)."""
    return f"{OUT}/base/{dataset}/{base}_H{horizon}_s{seed}.{ext}"


def tta_path(dataset: str, base: str, horizon: int, seed: int, ext: str = "json") -> str:
    """A cell's TTA summary (.json, per method) or per-window traces (.npz)."""
    return f"{OUT}/tta/{dataset}/{base}_H{horizon}_s{seed}.{ext}"


def tta_paths(datasets: dict) -> list[str]:
    return [tta_path(*cell) for cell in cells(datasets)]


def trace_cell(datasets: dict) -> tuple[str, str, int, int]:
    """The cell Figs. B/C follow: the first ett_like cell at its longest horizon, first seed (the spec's headline
    setting); another data set's when the profile runs no ett_like."""
    return min(cells(datasets), key=lambda c: (c[0] != "ett_like", -c[2], c[1], c[3]))


def trace_path(datasets: dict) -> str:
    return tta_path(*trace_cell(datasets), ext="npz")


def raw_files(datasets: dict, dataset: str) -> list[str]:
    """The catalog file a data set is read from; generators need none."""
    source = datasets[dataset]["source"]
    return [] if source in GENERATORS else [f"data/raw/{source}.csv"]


FIGURES = ("table_rel_improvement", "gain_vs_horizon", "stream_mse", "gate")


def out_path(name: str) -> str:
    """One of the paper's results: table.csv, stream.csv, claims.json (the evaluate step's), main_table.csv (the
    plot step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
