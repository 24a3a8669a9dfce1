"""The jobs of this paper, as pure functions of its params (params.yaml: tp_spikformer.plan, tp_spikformer.data).

One base model per seed (trained once, reused by every pruning evaluation of that seed), then one pruning sweep per
seed: every criterion x mode x budget on the same frozen model.
"""
from __future__ import annotations

from workflow.lib.images import fashion_paths

OUT = "results/tp_spikformer"
FIGURES = ("table_main", "fig_a_accuracy_vs_budget", "fig_b_accuracy_vs_sops")
DIGIT_SIDE = 8  # scikit-learn's digits, the canvas source's objects


def base_path(seed: int) -> str:
    return f"{OUT}/base/s{seed}.pt"


def sweep_path(seed: int) -> str:
    return f"{OUT}/sweeps/s{seed}.csv"


def sweep_paths(plan: dict) -> list[str]:
    return [sweep_path(s) for s in plan["seeds"]]


def raw_files(data: dict) -> list[str]:
    if data["source"] != "fashion":
        return []
    return [str(p) for split in ("train", "test") for p in fashion_paths(split)]


def check(p: dict) -> None:
    """What the schema cannot say: the canvas has room for its clutter, budgets fit the model's blocks and token
    grid, and the named budgets exist."""
    from workflow.core.params import ParamsError

    data = p["data"]
    blocks, grid = p["model"]["blocks"], data["side"] // 2
    if data["source"] == "canvas" and data["side"] - DIGIT_SIDE < 2 * data["clutter"]["crop"] - 1:
        raise ParamsError(f"tp_spikformer.data: a {data['side']} x {data['side']} canvas has no room for "
                          f"{data['clutter']['crop']} x {data['clutter']['crop']} clutter clear of an 8 x 8 digit in "
                          f"every position (it needs side >= 8 + 2 crop - 1). Fix: a larger side or a smaller crop.")
    prune = p["prune"]
    for name, keep in prune["budgets"].items():
        if len(keep) != blocks or max(keep) > grid:
            raise ParamsError(f"tp_spikformer.prune.budgets.{name} = {keep}: it needs one k per block ({blocks}) and "
                              f"k <= {grid} (the token grid is {grid} x {grid}). Fix: edit the schedule.")
    unknown = sorted(set(prune["sweep"]) - set(prune["budgets"]))
    if unknown:
        raise ParamsError(f"tp_spikformer.prune.sweep names budgets {unknown} that are not in prune.budgets "
                          f"{sorted(prune['budgets'])}. Fix: define them there or use the names listed.")
    unswept = sorted({prune["main_budget"], *prune["low_budgets"]} - set(prune["sweep"]))
    if unswept:
        raise ParamsError(f"tp_spikformer.prune: the claims' budgets {unswept} are not in prune.sweep "
                          f"{prune['sweep']}. Fix: add them to the sweep.")


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
