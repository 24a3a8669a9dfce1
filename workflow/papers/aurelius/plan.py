"""The jobs of this paper, as pure functions of its params (params.yaml: aurelius.plan).

The event set, the pairs and the evaluator (detector + effect classifier, which also scores the reference audio)
are one job each; a run is one (training strategy, seed): a TTA model trained the strategy's way, its generated
test audio scored by the evaluator. A run's name is <strategy>[_<thirds>]: ft_2 is fine-tuning on 2/3 of the
relation pairs (the paper's 200 h of 300 h). The rule file and the evaluate step find the same files through these
functions.
"""
from __future__ import annotations

OUT = "results/aurelius"
STRATEGIES = ("zs", "zs_scrambled", "ft", "fs", "ft_shuffled", "ft_scrambled")
# The runs the claims compare (K1-K5), then the negative controls (claims.yaml `controls:`).
CLAIMED = ("zs", "ft_1", "ft_2", "ft_3", "fs_1", "fs_2", "fs_3")
CONTROLS = ("zs_scrambled", "ft_shuffled_3", "ft_scrambled_1", "ft_scrambled_3")
EXAMPLES = 4  # test pairs whose generated log-mel a run keeps, for the spectrogram figure and the audio players
LISTEN = ("reference", "zs", "ft_3")  # whose examples the report plays (seed 0)
FIGURES = ("table_mirror", "fig_scaling", "fig_groups", "fig_spectrograms")


def parse(run: str) -> tuple[str, int]:
    """'ft_scrambled_3' -> ('ft_scrambled', 3); 'zs' -> ('zs', 0): the strategy and the thirds of the relation
    pairs it trains on (0: none, general pairs only)."""
    head, _, tail = run.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (run, 0)


def base(run: str) -> str | None:
    """The run a fine-tuned run starts from (its zero-shot model), None for one trained from scratch."""
    strategy, _ = parse(run)
    return {"ft": "zs", "ft_shuffled": "zs", "ft_scrambled": "zs_scrambled"}.get(strategy)


def base_model(run: str, seed) -> list[str]:
    """The model a run starts from: a fine-tuned run's zero-shot model (same seed); none for one trained from scratch."""
    start = base(run)
    return [model_path(start, seed)] if start else []


def events_path() -> str:
    return f"{OUT}/data/eventset.json"


def real_path() -> str:
    return f"{OUT}/data/real.npz"


def pairs_path() -> str:
    return f"{OUT}/data/pairs.json"


def mels_path() -> str:
    return f"{OUT}/data/mels.npz"


def evaluator_path() -> str:
    return f"{OUT}/evaluator/evaluator.pt"


def reference_path() -> str:
    return f"{OUT}/runs/reference.json"


def run_path(run: str, seed) -> str:
    """A run's generated test log-mels (the evaluate step scores them)."""
    return f"{OUT}/runs/{run}_s{seed}.npz"


def model_path(run: str, seed) -> str:
    return f"{OUT}/models/{run}_s{seed}.pt"


def run_paths(plan: dict) -> list[str]:
    return [run_path(r, s) for r in plan["runs"] for s in plan["seeds"]]


def check(p: dict) -> None:
    """What the schema cannot say: the claims need every claimed run and control, and a run's strategy is known."""
    from workflow.core.params import ParamsError

    runs = p["plan"]["runs"]
    unknown = [r for r in runs if parse(r)[0] not in STRATEGIES or (parse(r)[1] == 0) != parse(r)[0].startswith("zs")
               or parse(r)[1] > 3]
    if unknown:
        raise ParamsError(f"aurelius.plan.runs: {unknown} are not runs: a run is zs or zs_scrambled, or one of "
                          f"{', '.join(s for s in STRATEGIES if not s.startswith('zs'))} with _1, _2 or _3 (thirds "
                          "of the relation pairs). Fix: e.g. ft_3.")
    missing = [r for r in CLAIMED + CONTROLS if r not in runs]
    if missing:
        raise ParamsError(f"aurelius.plan.runs lacks {missing}: the claims compare {', '.join(CLAIMED)} and the "
                          f"controls stand in for them ({', '.join(CONTROLS)}). Fix: list them all.")
    t = p["train"]
    if t["d"] % t["heads"]:
        raise ParamsError(f"aurelius.train.d = {t['d']} is not a multiple of heads = {t['heads']}. Fix: e.g. d: 48 "
                          "with heads: 4.")


def out_path(name: str) -> str:
    """One of the paper's results: scores.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]


def sound_paths() -> list[str]:
    """The examples as audio, one file per (test pair, source in LISTEN), beside the figures."""
    return [f"{OUT}/figures/example{i}_{source}.wav" for i in range(EXAMPLES) for source in LISTEN]
