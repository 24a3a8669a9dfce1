"""The jobs of this paper, as pure functions of its params section (params.yaml: hypergraph_sparsify).

The rule file builds its job lists from these, and the evaluate step finds the same files through them: no
command line grows with the number of (family, seed) jobs.
"""
from __future__ import annotations

OUT = "results/hypergraph_sparsify"
FIGURES = ("figA_space_vs_m", "figB_error_vs_memory", "figC_sliding", "table_methods")


def jobs(p: dict) -> list[tuple[str, int]]:
    """(family, seed) pairs: one sparsify_eval job and one sliding job each."""
    return [(family, int(seed)) for family in p["plan"]["families"] for seed in p["plan"]["seeds"]]


def sweep_tables(p: dict) -> list[str]:
    """sparsify_eval's table of every job: one row per (m, order, method, reservoir seed)."""
    return [f"{OUT}/sparsify/{family}_s{seed}.csv" for family, seed in jobs(p)]


def space_logs(p: dict) -> list[str]:
    """sparsify_eval's memory log of every job: stored hyperedges every 1k arrivals."""
    return [f"{OUT}/sparsify/{family}_s{seed}_space.csv" for family, seed in jobs(p)]


def sliding_queries(p: dict) -> list[str]:
    """The sliding job's per-query table of every job."""
    return [f"{OUT}/sliding/{family}_s{seed}.csv" for family, seed in jobs(p)]


def sliding_memory(p: dict) -> list[str]:
    """The sliding job's memory trace of every job."""
    return [f"{OUT}/sliding/{family}_s{seed}_memory.csv" for family, seed in jobs(p)]


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
