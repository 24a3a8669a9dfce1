"""A run's record (per test pair its relation and MSR components; the run's FAD-mini) and the readers of records
that evaluate and plot share. Pure functions, no torch."""
from __future__ import annotations

import numpy as np
import pandas as pd

METRICS = ("presence", "relation", "parsimony", "msr")
PAPER_NAMES = {"presence": "mAPre", "relation": "mARel", "parsimony": "mAPar", "msr": "mAMSR"}


def scored_pairs(pairs: list[dict], rows: list[dict]) -> list[dict]:
    """Per pair its relation (name, group, arity) and its MSR components (the rows of models.score)."""
    return [{"name": p["relation"], "group": p["group"], "arity": p["arity"], **r} for p, r in zip(pairs, rows)]


def run_record(run: str, seed: int, pairs: list[dict], rows: list[dict], fad: float, extra: dict | None = None):
    return {"run": run, "seed": seed, "fad": fad, **(extra or {}), "pairs": scored_pairs(pairs, rows)}


def per_relation(record: dict) -> pd.DataFrame:
    """One row per relation (`name`; `relation` is the Relation component): its group, arity and the mean of each
    MSR component over its test pairs."""
    t = pd.DataFrame(record["pairs"])
    return t.groupby(["name", "group", "arity"], as_index=False)[list(METRICS)].mean()


def summary(record: dict) -> dict[str, float]:
    """mAPre, mARel, mAPar, mAMSR: means over thresholds (already), pairs, then relations (the paper's average)."""
    t = per_relation(record)
    return {PAPER_NAMES[m]: float(t[m].mean()) for m in METRICS}


def pairs_summary(pairs: list[dict], rows: list[dict]) -> dict[str, float]:
    """`summary` of scored pairs that make no run record of their own (the validation captions' audio)."""
    return summary({"pairs": scored_pairs(pairs, rows)})


def table(records: list[dict]) -> pd.DataFrame:
    """Every run's per-relation rows, with run, seed, FAD and the mAPre of its audio for the validation captions."""
    return pd.concat([per_relation(r).assign(run=r["run"], seed=r["seed"], fad=r["fad"],
                                             val_presence=r.get("val_presence", np.nan)) for r in records],
                     ignore_index=True)


def is_hard(t: pd.DataFrame) -> pd.Series:
    """Spec K5's hard relations: nested or of arity 2 or more (the easy ones: basic, arity 1)."""
    return t.group.eq("nested") | t.arity.ge(2)


def mean_or_nan(x) -> float:
    return float(np.mean(x)) if len(x) else float("nan")
