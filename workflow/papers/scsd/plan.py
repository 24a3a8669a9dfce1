"""The jobs of this paper, as pure functions of its params sections (params.yaml: scsd.plan, scsd.datasets).

A cell is (data set, missing-view rate r_V, fold = seed): one train job runs every method the plan asks for in that
cell (the main grid at the data set's own r_V, plus the r_V sweep), on one split and mask, each method from the
same seeds as if it ran alone. The rule file builds its job list from these, and the evaluate step finds the same
files through them: no command line grows with the number of cells.
"""
from __future__ import annotations

from workflow.lib import mfeat

OUT = "results/scsd"
FIGURES = ("main_table", "ablations", "ap_vs_missing_views", "view_weights", "label_graphs")


def cells(plan: dict, datasets: dict) -> dict[tuple[str, float, int], list[str]]:
    """{(data set, r_V, seed): methods}: the main grid (each data set at its own r_V), then the sweep's extra runs;
    a method in both is run once."""
    out: dict[tuple[str, float, int], list[str]] = {}
    for ds in plan["datasets"]:
        for s in plan["seeds"]:
            out.setdefault((ds, datasets[ds]["missing_view"], s), []).extend(plan["methods"][ds])
    sweep = plan["sweep"]
    for rv in sweep["missing_view"]:
        for s in sweep["seeds"]:
            out.setdefault((sweep["dataset"], rv, s), []).extend(sweep["methods"])
    return {cell: list(dict.fromkeys(methods)) for cell, methods in sorted(out.items())}


def cell_methods(plan: dict, datasets: dict, dataset: str, rv: float, seed: int) -> list[str]:
    return cells(plan, datasets)[(dataset, rv, seed)]


def data_path(dataset: str) -> str:
    """A data set's views, labels and folds."""
    return f"{OUT}/data/{dataset}.npz"


def cell_path(dataset: str, rv: float, seed: int) -> str:
    return f"{OUT}/runs/{dataset}/rv{rv}/s{seed}.json"


def cell_paths(plan: dict, datasets: dict) -> list[str]:
    return [cell_path(*cell) for cell in cells(plan, datasets)]


def graphs_cell(plan: dict, datasets: dict) -> str:
    """The cell whose SCSD run draws the label-graph heatmaps: the first data set at its own r_V, first seed."""
    ds = plan["datasets"][0]
    return cell_path(ds, datasets[ds]["missing_view"], plan["seeds"][0])


def raw_files(datasets: dict, dataset: str) -> list[str]:
    """Catalog files of a real data set; the generator needs none."""
    source = datasets[dataset]["source"]
    if source == "mfeat":
        return [str(mfeat.raw_path(v)) for v in mfeat.VIEWS]
    return [] if source == "synth" else [f"data/raw/{source}.csv"]


def out_path(name: str) -> str:
    """One of the paper's results: metrics.csv, view_weights.csv, claims.json (the evaluate step's), main_table.csv
    (the plot step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
