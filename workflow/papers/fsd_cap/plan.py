"""The jobs of this paper, as pure functions of its params sections (params.yaml: fsd_cap.plan, fsd_cap.datasets).

The rule file builds its job lists from these, and the evaluate step finds the same files through them: no
command line grows with the number of runs. One run job per (graph, seed) runs the methods of every plan block
holding that seed, so the FSD-CAP variants share stage 1 and the pre-GNN (workflow/papers/fsd_cap/run.py).
"""
from __future__ import annotations

from workflow.lib import mfeat

OUT = "results/fsd_cap"
FIGURES = ("table_main", "fig_a_missing_rate", "fig_b_link_auc", "fig_c_gamma")


def planned_methods(blocks: dict, seed: int) -> list[str]:
    """The methods of every plan block (of one graph) that holds this seed, in plan order, each once."""
    out = [m for block in blocks.values() if seed in block["seeds"] for m in block["methods"]]
    return list(dict.fromkeys(out))


def runs(plan: dict) -> list[tuple[str, int]]:
    """Every (graph, seed) that some block with methods holds: one run job each."""
    return sorted({(ds, s) for ds, blocks in plan.items() for b in blocks.values() if b["methods"] for s in b["seeds"]})


def data_path(dataset: str) -> str:
    """A graph's features, labels and edges."""
    return f"{OUT}/data/{dataset}.npz"


def run_path(dataset: str, seed: int) -> str:
    return f"{OUT}/runs/{dataset}/s{seed}.json"


def run_paths(plan: dict) -> list[str]:
    return [run_path(ds, s) for ds, s in runs(plan)]


def raw_files(datasets: dict, dataset: str) -> list[str]:
    """Catalog files of a real data set (its two mfeat views); the generator needs none."""
    d = datasets[dataset]
    return [str(mfeat.raw_path(d[v])) for v in ("graph_view", "feature_view")] if d["source"] == "mfeat" else []


def out_path(name: str) -> str:
    """One of the paper's results: metrics.csv, main_table.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
