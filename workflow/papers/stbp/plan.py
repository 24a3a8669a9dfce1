"""The jobs of this paper, as pure functions of its plan section (params.yaml: stbp.plan).

The rule file builds its job lists from these, and the evaluate step finds the same files through them: no
command line grows with the number of runs. A run is one method with one training seed through every yearly task
of one data set.
"""
from __future__ import annotations

OUT = "results/stbp"
FIGURES = ("table_main", "fig_a_mae_per_year", "fig_b_cost", "fig_c_nodes")
GROUPS = ("main", "ablations")  # the claims' methods, and the ablations (info)


def runs(plan: dict) -> list[tuple[str, str, int]]:
    """Every (data set, method, seed) run, in plan order; a run both groups list is run once."""
    listed = [(ds, m, s) for ds, groups in plan.items() for group in GROUPS
              for m in groups[group]["methods"] for s in groups[group]["seeds"]]
    return list(dict.fromkeys(listed))


def run_path(dataset: str, method: str, seed: int) -> str:
    return f"{OUT}/runs/{dataset}/{method}_s{seed}.json"


def run_paths(plan: dict) -> list[str]:
    return [run_path(*run) for run in runs(plan)]


def raw_files(dataset: str) -> list[str]:
    """The catalog file of a real data set; the generator (stream) needs none."""
    return [] if dataset == "stream" else [f"data/raw/{dataset}.csv"]


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
