"""The two tasks of this paper, their shared vocabulary and their scoring (no torch: the data step uses them)."""
from __future__ import annotations

import numpy as np

from workflow.lib import arith, listop
from workflow.lib.tokenizer import CharVocab

PROMPT_LEN, GEN_LEN = arith.PROMPT_LEN, arith.GEN_LEN  # both tasks fit the chains' 24 + 32
TASKS = ("chain", "listop")


def vocab() -> CharVocab:
    return CharVocab("".join(dict.fromkeys(arith.ALPHABET + listop.ALPHABET)))


def draw(task: str, rng: np.random.Generator, data: dict) -> tuple[str, str]:
    if task == "chain":
        return arith.problem(rng, data["min_ops"], data["max_ops"])
    return listop.problem(rng)


def problems(task: str, seed: int, n: int, data: dict, exclude: frozenset = frozenset()) -> list[tuple[str, str]]:
    return arith.distinct(lambda rng: draw(task, rng, data), seed, n, exclude)


def correct(task: str, prompt: str, response: str) -> bool:
    """chain: the answer after '#' (as GSM8K is scored); listop: the whole list, exactly."""
    if task == "chain":
        return arith.answer_of(response) == arith.solve(prompt)
    return response == listop.solve(prompt)
