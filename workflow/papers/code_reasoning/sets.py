"""The fixed sets of the miniature, a pure function of the data params (no torch): disjoint programs for
finetuning, for the base model's priming set and for the test items, all of which fit the model's context."""
from __future__ import annotations

import numpy as np

from . import world as W

TASKS = ("math", "code", "nl")
GATED_TASKS = ("math", "code")  # the gate K0's tasks: the validation split has only these
RENDERED = tuple(v for v in W.VARIANTS if v not in W.NEEDS_OTHER)


def fits(p: dict) -> bool:
    """Every prompt of the program within PROMPT_LEN and every rendering within RESPONSE_LEN (the longest
    renderings are drawn with the program itself as the 'other')."""
    rng = np.random.default_rng(0)
    prompts = (W.instruction(p), W.math_item(p), W.code_item(p))
    return (max(map(len, prompts)) <= W.PROMPT_LEN
            and max(len(W.render(p, v, rng, p)) for v in W.VARIANTS) <= W.RESPONSE_LEN - 8)  # 8: slack for a longer 'other'


def programs(rng: np.random.Generator, n: int, taken: set[str], statements: tuple[int, int]) -> list[dict]:
    """n distinct programs of `statements` (fewest, most) that fit, none of whose keys is in `taken` (which they
    are added to)."""
    out = []
    while len(out) < n:
        p = W.draw_program(rng, statements)
        k = W.key(p)
        if k not in taken and fits(p):
            taken.add(k)
            out.append(p)
    return out


def nl_items(rng: np.random.Generator, n: int, taken: set[str]) -> list[tuple[str, str]]:
    out = []
    while len(out) < n:
        q, a = W.nl_item(rng)
        if q not in taken:
            taken.add(q)
            out.append((q, str(a)))
    return out


def items(task: str, progs: list[dict], nl: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(prompt, answer) of an evaluation task."""
    if task == "nl":
        return nl
    ask = W.math_item if task == "math" else W.code_item
    return [(ask(p), str(W.run(p))) for p in progs]


def build(p: dict) -> dict:
    """{"train": programs, "priming": [(prompt, answer)], "test": {task: [(prompt, answer)]},
    "validation": {task: [(prompt, answer)]}}: test programs first, so that a larger finetuning set never changes
    them. The validation programs (math and code, the gate's tasks), on which every calibration pilot is judged
    and never on test items, come last from their own seed: adding them changed no other set."""
    rng, taken, questions = np.random.default_rng(p["data_seed"]), set(), set()
    lengths = tuple(p["statements"])
    test_programs = programs(rng, p["test_items"], taken, lengths)
    test_nl = nl_items(rng, p["test_items"], questions)
    prime_programs = programs(rng, p["priming_items"], taken, lengths)
    prime_nl = nl_items(rng, p["priming_items"], questions)
    train = programs(rng, p["train_programs"], taken, lengths)
    val_programs = programs(np.random.default_rng(p["val_seed"]), p["val_items"], taken, lengths)
    priming = [pair for task in TASKS for pair in items(task, prime_programs, prime_nl)]
    return {"train": train, "priming": priming, "test": {task: items(task, test_programs, test_nl) for task in TASKS},
            "validation": {task: items(task, val_programs, []) for task in GATED_TASKS}}


def density(train: list[dict]) -> dict[str, float]:
    """rho per variant: its responses' characters over the Python rendering's (the paper's token ratio, in
    characters: a character model has no BPE)."""
    rng = np.random.default_rng(0)
    py = sum(len(W.render(p, "py", rng)) for p in train)
    return {v: sum(len(W.render(p, v, rng, train[(i + 1) % len(train)])) for i, p in enumerate(train)) / py
            for v in W.VARIANTS}
