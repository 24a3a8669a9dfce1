"""The jobs of this paper, as pure functions of its params (params.yaml: refusion).

Three models of the same size per seed (ARM, MDM, ReFusion), each trained once on the same stream, then one decoding
job per seed that scores every decoder on the test problems of both tasks and times them at batch 1.

Decoders (one row per (decoder, task, problem) in the decodes table):
  arm                              greedy next-token decoding with the KV cache
  mdm/s<steps>                     LLaDA sampling, low-confidence remasking, semi-AR blocks, `steps` forwards for G
  refusion                         plan-and-infill at the setting chosen on the validation problems
  refusion/<tau_slot>_<tau_tok>    every setting of the grid (what the choice was made from)
  refusion_plan_only               the control of K1/K3: every masked slot drafted and accepted unverified
  refusion_one_slot                the control of K4: one slot per round, infilled one token at a time
The speed table times arm, mdm/s<G>, refusion, refusion_one_slot (the control of K4) and refusion_no_cache (the
control of K2: the same decoding with the prefix re-fed at every call) on the first `speed_items` problems of each
task: every decoder a timed claim compares, its controls included.
"""
from __future__ import annotations

OUT = "results/refusion"
MODELS = ("arm", "mdm", "refusion")
FIGURES = ("fig_speed_accuracy", "table_main")


def problems_path() -> str:
    return f"{OUT}/data/problems.json"


def model_path(kind: str, seed: int) -> str:
    return f"{OUT}/models/{kind}/s{seed}.pt"


def decodes_path(seed: int) -> str:
    return f"{OUT}/decodes/s{seed}.csv"


def speed_path(seed: int) -> str:
    return f"{OUT}/decodes/s{seed}_speed.csv"


def decodes_paths(p: dict) -> list[str]:
    return [decodes_path(s) for s in p["seeds"]]


def speed_paths(p: dict) -> list[str]:
    return [speed_path(s) for s in p["seeds"]]


def out_path(name: str) -> str:
    """One of the paper's results: decoders.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]


def setting_name(tau_slot: float, tau_tok: float) -> str:
    return f"refusion/{tau_slot:g}_{tau_tok:g}"


def check(p: dict) -> None:
    from workflow.core.params import ParamsError

    if p["data"]["min_ops"] > p["data"]["max_ops"]:
        raise ParamsError(f"refusion.data: min_ops {p['data']['min_ops']} > max_ops {p['data']['max_ops']}. Fix: swap them.")
    d = p["decode"]
    for k in [*p["train"]["slot_sizes"], d["slot"]]:
        if 32 % k:
            raise ParamsError(f"refusion: slot size {k} does not divide the 32-token answer. Fix: use 1, 2, 4, 8 or 16.")
    if d["serial_blocks"] > 32 // d["slot"]:
        raise ParamsError(f"refusion.decode.serial_blocks {d['serial_blocks']} exceeds the {32 // d['slot']} slots "
                          "of an answer. Fix: lower it.")
    if 32 not in d["mdm_steps"]:
        raise ParamsError("refusion.decode.mdm_steps must include 32 (one token per step, the MDM that K1 and K2 "
                          "compare against). Fix: add 32.")
    if d["speed_items"] > p["data"]["test"]:
        raise ParamsError(f"refusion.decode.speed_items {d['speed_items']} > data.test {p['data']['test']}. Fix: lower it.")
