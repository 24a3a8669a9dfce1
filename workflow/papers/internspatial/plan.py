"""The jobs of this paper, as pure functions of its params (params.yaml: internspatial.plan).

One data job renders the scenes and writes the QA; one encoder job per seed pretrains the vision encoder every
regime of that seed starts from; a run is one (training regime, seed): the small VLM trained the
regime's way and asked every test item, ISB-mini items in each of the 19 formats. The rule file and the evaluate step
find the same files through these functions.
"""
from __future__ import annotations

OUT = "results/internspatial"
FIGURES = ("table_isb", "table_vsi", "fig_formats", "fig_qa_cards")
REGIMES = ("m0", "m1", "m2")  # the paper's base, spatial-raw and spatial models (methods.REGIMES adds the controls)
CONTROLS = ("m2_shuffled", "m2_wrongcue", "m2_nogeneral", "m2_shuffledgeneral")  # the last: the placebo of K4


def runs(plan: dict) -> list[tuple[str, int]]:
    return [(regime, seed) for regime in plan["regimes"] for seed in plan["seeds"]]


def images_path() -> str:
    return f"{OUT}/data/images.npz"


def qa_path() -> str:
    return f"{OUT}/data/qa.json"


def encoder_path(seed) -> str:
    return f"{OUT}/encoders/encoder_s{seed}.pt"


def run_path(regime: str, seed) -> str:
    return f"{OUT}/runs/{regime}_s{seed}.json"


def run_paths(plan: dict) -> list[str]:
    return [run_path(*r) for r in runs(plan)]


def check(p: dict) -> None:
    """What the schema cannot say: the claims compare the three regimes, and each control stands in for M2."""
    from workflow.core.params import ParamsError

    missing = [r for r in REGIMES + CONTROLS if r not in p["plan"]["regimes"]]
    if missing:
        raise ParamsError(f"internspatial.plan.regimes lacks {missing}: the claims compare m0, m1 and m2, and each "
                          f"control stands in for m2. Fix: list all of {', '.join(REGIMES + CONTROLS)}.")
    t = p["train"]
    if t["d"] % t["heads"]:
        raise ParamsError(f"internspatial.train.d = {t['d']} is not a multiple of heads = {t['heads']}: each attention "
                          "head takes d / heads dimensions. Fix: e.g. d: 64 with heads: 4.")


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
