"""The jobs and decoders of this paper, as pure functions of its params (params.yaml: hex).

One masked-diffusion model per seed (trained once), then one decoding job per seed that runs every decoder on the
validation and test problems with that model, then the votes, the claims and the figures.

Decoders are named by what they are, one row of the decodes table per (decoder, problem):
  one/<remasking>                 the non-semi-AR decoder, one block of 32, greedy
  fixed/b<b>                      semi-AR blocks of b, low-confidence remasking, greedy
  <arm>/b<b>/s<k>                 a HEX path: blocks of b, Gumbel-max at the arm's temperature, sampling seed k
  sc_<arm>/s<k>, sc2_<arm>/s<k>   self-consistency: the validation-best fixed block, as many paths as the arm, at its
                                  temperature; sc2 is a second, independent draw (the control of claim K3)
"""
from __future__ import annotations

OUT = "results/hex"
ARMS = ("paper", "small")
JUDGED = ("test", "long")  # the splits the claims read: chains like the training ones, and longer ones
FIGURES = ("fig1_accuracy", "fig_collapse", "fig_scaling", "fig_experts")


def problems_path() -> str:
    return f"{OUT}/data/problems.json"


def model_path(seed: int) -> str:
    return f"{OUT}/models/s{seed}.pt"


def decodes_path(seed: int) -> str:
    return f"{OUT}/decodes/s{seed}.csv"


def decodes_paths(plan: dict) -> list[str]:
    return [decodes_path(s) for s in plan["seeds"]]


def eos_path(seed: int) -> str:
    return f"{OUT}/decodes/s{seed}_eos.csv"


def eos_paths(plan: dict) -> list[str]:
    return [eos_path(s) for s in plan["seeds"]]


def out_path(name: str) -> str:
    """One of the paper's results: main_table.csv, decoders.csv, scaling.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]


def arm_paths(arm: dict, name: str) -> list[tuple[str, int, int]]:
    """(decoder, block, sampling seed) of an arm's paths, ordered by block, then seed: the vote's tie-break order
    (the repo's `frequency` rule returns the first-inserted mode; blocks ascending = smallest block wins)."""
    return [(f"{name}/b{b}/s{k}", b, k) for b in sorted(arm["blocks"]) for k in range(arm["seeds"])]


def paths_of(arm: dict) -> int:
    return len(arm["blocks"]) * arm["seeds"]


def check(p: dict) -> None:
    """What the schema cannot say."""
    from workflow.core.params import ParamsError

    if p["data"]["min_ops"] > p["data"]["max_ops"]:
        raise ParamsError(f"hex.data: min_ops {p['data']['min_ops']} > max_ops {p['data']['max_ops']}. Fix: swap them.")
    if "margin" not in p["decode"]["one_block"]:
        raise ParamsError("hex.decode.one_block must include margin: claims K1 and K2 compare against top-k margin "
                          "decoding. Fix: add margin.")
    most = paths_of(p["decode"]["arms"]["paper"])
    too_many = [k for k in p["decode"]["scaling_paths"] if k > most]
    if too_many:
        raise ParamsError(f"hex.decode.scaling_paths {too_many} exceed the paper arm's {most} paths (blocks x seeds). "
                          "Fix: remove them or add seeds to decode.arms.paper.")
