"""The jobs of this paper, as pure functions of its params (params.yaml: semhitok.plan, semhitok.data).

A run is one (image set, seed, tokenizer variant); variants are the kinds of methods.KINDS, with `joint_<lambda>`
for each lambda of the joint-loss sweep. The rule file and the evaluate step find the same files through these.
"""
from __future__ import annotations

from workflow.lib.images import fashion_paths

OUT = "results/semhitok"
FIGURES = ("table_main", "fig_a_tradeoff", "fig_b_reconstructions")
# The tokenizer kinds (methods.py builds them; defined here, where no torch is imported, and imported there)
KINDS = ("sghc", "flat", "pixel", "semonly", "joint", "random", "coupled", "widepixel")


def variants(plan: dict) -> list[str]:
    return list(plan["variants"]) + [f"joint_{lam:g}" for lam in plan["lambdas"]]


def kind_of(variant: str) -> tuple[str, float]:
    """('joint', 0.3) for 'joint_0.3'; (kind, 0.0) for the other variants."""
    kind, _, lam = variant.partition("_")
    if kind not in KINDS or (kind == "joint") != bool(lam):
        named = [k for k in KINDS if k != "joint"] + ["joint_<lambda>"]
        raise ValueError(f"unknown tokenizer variant {variant!r}: one of {', '.join(named)}")
    return kind, float(lam or 0.0)


def nets_jobs(plan: dict) -> list[tuple[str, int]]:
    """Every (image set, seed): plan.seeds gives each image set's seeds."""
    return [(ds, seed) for ds in plan["datasets"] for seed in plan["seeds"][ds]]


def runs(plan: dict) -> list[tuple[str, int, str]]:
    return [(ds, seed, v) for ds, seed in nets_jobs(plan) for v in variants(plan)]


def data_path(dataset: str) -> str:
    return f"{OUT}/data/{dataset}.npz"


def nets_path(dataset: str, seed) -> str:
    return f"{OUT}/nets/{dataset}/s{seed}.pt"


def nets_summary(dataset: str, seed) -> str:
    return f"{OUT}/nets/{dataset}/s{seed}.json"


def run_path(dataset: str, seed, variant: str) -> str:
    return f"{OUT}/runs/{dataset}/{variant}_s{seed}.json"


def samples_path(dataset: str, seed, variant: str) -> str:
    return f"{OUT}/runs/{dataset}/{variant}_s{seed}.npz"


def run_paths(plan: dict) -> list[str]:
    return [run_path(*r) for r in runs(plan)]


def summaries(plan: dict) -> list[str]:
    return [nets_summary(*job) for job in nets_jobs(plan)]


def out_path(name: str) -> str:
    """One of the paper's results: table.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]


def raw_files(dataset: str) -> list[str]:
    """The catalog files an image set reads: Fashion-MNIST's four IDX files; the digits are bundled with sklearn."""
    return [str(p) for split in ("train", "test") for p in fashion_paths(split)] if dataset == "fashion" else []


def check(p: dict) -> None:
    """What the schema cannot say: the claims compare SGHC with every baseline, on the same seeds."""
    from workflow.core.params import ParamsError

    needed = {"sghc", "flat", "pixel", "semonly", "random", "coupled"}
    missing = sorted(needed - set(p["plan"]["variants"]))
    if missing:
        raise ParamsError(f"semhitok.plan.variants lacks {missing}: every claim compares SGHC with these (coupled: "
                          "K3's control and placebo). Fix: list all of sghc, flat, pixel, semonly, random, coupled.")
    unseeded = [ds for ds in p["plan"]["datasets"] if not p["plan"]["seeds"].get(ds)]
    if unseeded:
        raise ParamsError(f"semhitok.plan.seeds gives no seeds for {unseeded}. Fix: add e.g. `{unseeded[0]}: [0]`.")
    if not p["plan"]["lambdas"]:
        raise ParamsError("semhitok.plan.lambdas is empty: K3 needs the joint-loss sweep. Fix: give at least one lambda.")
