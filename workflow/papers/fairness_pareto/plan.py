"""The jobs of this paper and their files, as pure functions of its params (params.yaml: fairness_pareto).

One cell = one (data set, seed): a base model, its frontiers and its intervention points. The rule file builds its
job lists and file patterns from these, and the evaluate step finds the same files through them: no command line
grows with the number of cells.
"""
from __future__ import annotations

OUT = "results/fairness_pareto"
FIGURES = ("frontier_eod", "frontier_dp", "fairness_tradeoff", "table_eod_optimal")


def cells(plan: dict) -> list[tuple[str, int]]:
    """(data set, seed) pairs of the ``plan`` section, data set by data set."""
    return [(dataset, seed) for dataset in plan["datasets"] for seed in plan["seeds"]]


def cell_files(dataset, seed) -> dict[str, str]:
    """The files one cell's jobs write (``dataset``/``seed`` may be Snakemake wildcards such as "{dataset}")."""
    cell = f"{dataset}_s{seed}"
    return {"features": f"{OUT}/base/{cell}.npz", "model": f"{OUT}/base/{cell}.pt", "base": f"{OUT}/base/{cell}.json",
            "frontiers": f"{OUT}/frontiers/{cell}.csv", "fairfair": f"{OUT}/frontiers/{cell}_fairfair.csv",
            "summary": f"{OUT}/frontiers/{cell}.json", "control": f"{OUT}/frontiers/{cell}_shuffled.csv",
            "points": f"{OUT}/points/{cell}.csv"}


def paths(plan: dict, kind: str) -> list[str]:
    """One kind of file (a key of :func:`cell_files`) of every cell, in the order of :func:`cells`."""
    return [cell_files(dataset, seed)[kind] for dataset, seed in cells(plan)]


def raw_files(source: str) -> list[str]:
    """The catalog files (rules/data.smk) a data set's source is read from."""
    names = ["adult_train", "adult_test"] if source == "adult" else [source]
    return [f"data/raw/{name}.csv" for name in names]


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
