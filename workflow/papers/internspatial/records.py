"""The runs' answers scored against the QA's ground truth, as one long table (regime, seed, set, format, category,
accuracy), found through the plan; the answer-prior baseline and chance (a uniform pick among each item's candidates);
and the same for the validation split, which pilots are judged on. Read by the evaluate and plot steps (a step never
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


def score(answers: dict[str, list[str]], test_items: list[dict], formats: tuple[str, ...] = qa.FORMATS) -> list[dict]:
    """Rows of (set, format, category, accuracy, n) for one run's answers."""
    rows = []
    for name, asked in qa.test_sets(test_items, formats).items():
        kind, _, fmt = name.partition("/")
        right = collections.defaultdict(list)
        for (it, _, _), said in zip(asked, answers[name], strict=True):
            right[it["category"]].append(said == it["answer"])
        rows += [{"set": kind, "format": fmt or "nl+raw", "category": cat, "accuracy": sum(r) / len(r), "n": len(r)}
                 for cat, r in sorted(right.items())]
    return rows


def prior(record: dict, split: str = "test") -> list[dict]:
    """The majority-answer baseline (spec risk ii): each category's most frequent training answer, asked of the
    split's items, scored as a run of regime 'prior' (seed -1) in natural language."""
    counts = collections.defaultdict(collections.Counter)
    for it in record["items"]["train"]:
        counts[it["category"]][it["answer"]] += 1
    held_out = record["items"][split]
    answers = {name: [counts[it["category"]].most_common(1)[0][0] if counts[it["category"]] else "" for it, _, _ in r]
               for name, r in qa.test_sets(held_out, ("nl+raw",)).items()}
    return [row | {"regime": "prior", "seed": -1} for row in score(answers, held_out, ("nl+raw",))]


def chance(record: dict, split: str = "test") -> list[dict]:
    """Chance: the expected accuracy of a uniform pick among each item's candidates, as regime 'chance' (seed -1)."""
    rows = []
    for name, asked in qa.test_sets(record["items"][split], ("nl+raw",)).items():
        per = collections.defaultdict(list)
        for it, _, _ in asked:
            per[it["category"]].append(1 / len(qa.candidates(it)))
        rows += [{"set": name.partition("/")[0], "format": "nl+raw", "category": cat, "accuracy": sum(v) / len(v),
                  "n": len(v), "regime": "chance", "seed": -1} for cat, v in sorted(per.items())]
    return rows


def scores_table(p: dict, split: str = "test") -> pd.DataFrame:
    """Every run's scores on the test split (all 19 formats) or on the validation split ('val': natural language on
    the raw images), with the prior and chance rows of the split."""
    record = read_qa()
    key, formats = ("answers", qa.FORMATS) if split == "test" else ("val_answers", ("nl+raw",))
    rows = prior(record, split) + chance(record, split)
    for (regime, seed), path in zip(plan.runs(p), plan.run_paths(p)):
        run = read_json(path)
        rows += [row | {"regime": regime, "seed": seed} for row in score(run[key], record["items"][split], formats)]
    return pd.DataFrame(rows)


def gate(t: pd.DataFrame, prior_rows: pd.DataFrame) -> float:
    """K0's metric on one seed's rows: M1's ISB accuracy in natural language on the raw images over the majority
    answer, mean over categories (on the test or the validation split, whichever the rows are of)."""
    m1_nl = t[t.set.eq("isb") & t.regime.eq("m1") & t.format.eq("nl+raw")].set_index("category").accuracy
    return float((m1_nl - prior_rows[prior_rows.set.eq("isb")].set_index("category").accuracy).mean())


def category_means(table: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Accuracy per (regime, seed, category) of one set, every format's items pooled."""
    t = table[table.set.eq(kind)]
    return t.groupby(["regime", "seed", "category"]).accuracy.mean().reset_index()
