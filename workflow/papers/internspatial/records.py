"""The runs' answers scored against the QA's ground truth, as one long table (regime, seed, set, format, category,
accuracy), found through the plan; and the answer-prior baseline. Read by the evaluate and plot steps (a step never
imports another step)."""
from __future__ import annotations

import collections
import json

import pandas as pd

from workflow.core.io import read_json

from . import plan, qa


def read_qa() -> dict:
    with open(plan.qa_path()) as f:
        return json.load(f)


def score(answers: dict[str, list[str]], test_items: list[dict]) -> list[dict]:
    """Rows of (set, format, category, accuracy, n) for one run's answers."""
    rows = []
    for name, asked in qa.test_sets(test_items).items():
        kind, _, fmt = name.partition("/")
        right = collections.defaultdict(list)
        for (it, _, _), said in zip(asked, answers[name], strict=True):
            right[it["category"]].append(said == it["answer"])
        rows += [{"set": kind, "format": fmt or "nl+raw", "category": cat, "accuracy": sum(r) / len(r), "n": len(r)}
                 for cat, r in sorted(right.items())]
    return rows


def prior(record: dict) -> list[dict]:
    """The majority-answer baseline (spec risk ii): each category's most frequent training answer, asked of its
    test items, scored as a run of regime 'prior' (seed -1) in natural language."""
    counts = collections.defaultdict(collections.Counter)
    for it in record["items"]["train"]:
        counts[it["category"]][it["answer"]] += 1
    test = record["items"]["test"]
    answers = {name: [counts[it["category"]].most_common(1)[0][0] if counts[it["category"]] else "" for it, _, _ in r]
               for name, r in qa.test_sets(test).items()}
    return [row | {"regime": "prior", "seed": -1} for row in score(answers, test) if row["format"] == "nl+raw"]


def scores_table(p: dict) -> pd.DataFrame:
    record = read_qa()
    rows = prior(record)
    for (regime, seed), path in zip(plan.runs(p), plan.run_paths(p)):
        run = read_json(path)
        rows += [row | {"regime": regime, "seed": seed} for row in score(run["answers"], record["items"]["test"])]
    return pd.DataFrame(rows)


def category_means(table: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Accuracy per (regime, seed, category) of one set, every format's items pooled."""
    t = table[table.set.eq(kind)]
    return t.groupby(["regime", "seed", "category"]).accuracy.mean().reset_index()
