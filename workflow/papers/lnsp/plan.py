"""The jobs of this paper and their files, as pure functions of its params section (params.yaml: lnsp).

The rule file builds its job lists from these, and the evaluate step finds the same files through them: no command
line grows with the number of seeds or teachers.
"""
from __future__ import annotations

GATE = 0.999  # spec C2/C3: a teacher counts when its held-out NSP string accuracy is >= 99.9 % (extract, evaluate)

OUT = "results/lnsp"
FIGURES = ("table_main", "dyck_samples")
VARIANTS = {"full": "teachers", "weak": "weak_teachers"}  # teacher variant -> the params key listing its languages


def exact_paths(p: dict) -> list[str]:
    """The exact-teacher runs (C1, C4): one file per seed, every language in it."""
    return [f"{OUT}/exact/s{seed}.csv" for seed in p["seeds"]]


def teachers(p: dict) -> list[tuple[str, int, str]]:
    """(variant, seed, language) of every Transformer teacher: each variant's seeds x its languages."""
    return [(variant, seed, lang) for variant in VARIANTS for seed in p["variants"][variant]["seeds"]
            for lang in languages(p, variant)]


def languages(p: dict, variant: str) -> list[str]:
    """The languages a variant trains teachers of (``p`` holds the list under ``VARIANTS[variant]``)."""
    return list(p[VARIANTS[variant]])


def teacher_files(variant, seed, lang) -> dict[str, str]:
    """A teacher's checkpoint and training summary (arguments may be Snakemake wildcards such as "{lang}")."""
    base = f"{OUT}/teachers/{variant}/s{seed}/{lang}"
    return {"model": f"{base}.pt", "summary": f"{base}.json"}


def extract_seeds(p: dict) -> list[int]:
    """The seeds of the extract jobs: one job per seed extracts every teacher of that seed (all variants)."""
    return list(dict.fromkeys(seed for _, seed, _ in teachers(p)))


def extract_teachers(p: dict, seed: int) -> list[tuple[str, str]]:
    """(variant, language) of the teachers one extract job reads, in the order of :func:`teachers`."""
    return [(variant, lang) for variant, s, lang in teachers(p) if s == int(seed)]


def extract_path(seed) -> str:
    return f"{OUT}/extract/s{seed}.json"


def extract_paths(p: dict) -> list[str]:
    """The extract jobs' files, in the order of :func:`extract_seeds`."""
    return [extract_path(seed) for seed in extract_seeds(p)]


def extract_inputs(p: dict, seed) -> list[str]:
    """The checkpoints and summaries an extract job reads."""
    return [f for variant, lang in extract_teachers(p, seed) for f in teacher_files(variant, seed, lang).values()]


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
