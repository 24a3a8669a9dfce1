"""The jobs of this paper, as pure functions of its params (params.yaml: code_reasoning).

One data job (the fixed sets), one base model per seed (real English + the priming set), then one job per
(variant, seed) that finetunes the seed's base on that variant and scores it on the three tasks; `zeroshot` is the
base itself, scored without finetuning (the paper's zero-shot row).

Variants (world.py renders them): nl, py; structural perturbations py_nows, py_kwrand; semantic ones py_varren,
py_nocomm, py_commswap; low interpretability py_commmislead, fictional; abstractions pseudo, flowchart, nlsteps;
density compressed; and py_mismatch, the negative control of K1 and K3-K5 (another program's code before this
program's answer: the code's content removed, its form kept); pseudo_mismatch, flowchart_mismatch and
compressed_mismatch, the placebos of K3 and K4 (the credited rendering of another program before this program's
answer: only the rendering's content made inert, its form kept).
"""
from __future__ import annotations

OUT = "results/code_reasoning"
ZEROSHOT = "zeroshot"
FIGURES = ("fig1_code_vs_prose", "fig_axes")
GATED_VARIANT = "py"  # the gate K0's model: its finetune is also scored on the validation split (the calibration's
                      # metric)


def sets_path() -> str:
    return f"{OUT}/data/sets.json"


def base_path(seed) -> str:
    return f"{OUT}/base/s{seed}.pt"


def scores_path(variant: str, seed) -> str:
    return f"{OUT}/scores/{variant}/s{seed}.json"


def all_scores(plan: dict) -> list[str]:
    return [scores_path(v, s) for v in [ZEROSHOT, *plan["variants"]] for s in plan["seeds"]]


def out_path(name: str) -> str:
    """One of the paper's results: table_accuracy.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]


NEEDED = {  # variant -> the claims that read it (a plan without it cannot judge them)
    "py": "K0-K5", "nl": "K1", "py_mismatch": "the controls of K1, K3-K5", "py_nows": "K2", "py_kwrand": "K2, K5",
    "py_varren": "K2", "py_nocomm": "K2", "py_commswap": "K2", "pseudo": "K3", "flowchart": "K3", "compressed": "K4",
    "fictional": "K5", "py_commmislead": "K5", "pseudo_mismatch": "the placebo of K3",
    "flowchart_mismatch": "the placebo of K3", "compressed_mismatch": "the placebo of K4"}


def check(p: dict) -> None:
    """What the schema cannot say."""
    from workflow.core.params import ParamsError

    from . import world

    unknown = sorted(set(p["plan"]["variants"]) - set(world.VARIANTS))
    if unknown:
        raise ParamsError(f"code_reasoning.plan.variants: unknown {unknown}; known: {list(world.VARIANTS)}. "
                          "Fix: remove them.")
    low, high = p["data"]["statements"]
    if low > high:
        raise ParamsError(f"code_reasoning.data.statements: [{low}, {high}] is [fewest, most]. Fix: swap them.")
    if p["model"]["d"] % p["model"]["heads"] or (p["model"]["d"] // p["model"]["heads"]) % 2:
        raise ParamsError(f"code_reasoning.model: d {p['model']['d']} / heads {p['model']['heads']} must be an even "
                          "integer (rotary embeddings). Fix: change d or heads.")
