"""The jobs of this paper, as pure functions of its params (params.yaml: mppd_tv.plan, mppd_tv.data).

A run is one (training mode, regulariser, seed). The rule file builds its job list from these, and the evaluate
step finds the same files through them: no command line grows with the number of runs.
"""
from __future__ import annotations

from workflow.lib.images import fashion_paths

OUT = "results/mppd_tv"
FIGURES = ("table_main", "fig_a_robustness", "fig_b_toy")


def runs(plan: dict) -> list[tuple[str, str, int]]:
    """Every (mode, regulariser, seed), in plan order."""
    return [(mode, reg, seed) for mode in plan["modes"] for reg in plan["regs"] for seed in plan["seeds"]]


def run_path(mode: str, reg: str, seed: int) -> str:
    return f"{OUT}/runs/{mode}/{reg}_s{seed}.json"


def run_paths(plan: dict) -> list[str]:
    return [run_path(*run) for run in runs(plan)]


def raw_files(data: dict) -> list[str]:
    """The catalog files of Fashion-MNIST (train and test images and labels); the 8x8 digits need none."""
    if data["source"] != "fashion":
        return []
    return [str(p) for split in ("train", "test") for p in fashion_paths(split)]


def check(p: dict) -> None:
    """What the schema cannot say: the robust score's levels must be among the evaluated ones."""
    from workflow.core.params import ParamsError

    for score, evaluated in (("score_sigmas", "eval_sigmas"), ("score_eps", "eval_eps")):
        extra = sorted(set(p["eval"][score]) - set(p["eval"][evaluated]))
        if extra:
            raise ParamsError(f"mppd_tv.eval.{score} has {extra}, which are not in mppd_tv.eval.{evaluated} "
                              f"{p['eval'][evaluated]}: the score can only average evaluated levels. Fix: add them "
                              f"to {evaluated} or remove them from {score}.")


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
