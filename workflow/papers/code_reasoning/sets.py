"""The fixed sets of the miniature, a pure function of the data params (no torch): disjoint programs for
finetuning, for the base model's priming set and for the test items, all of which fit the model's context."""
from __future__ import annotations

import numpy as np

from . import world as W

TASKS = ("math", "code", "nl")
GATED_TASKS = ("math", "code")  # the gate K0's tasks: the validation split has only these
RENDERED = tuple(v for v in W.VARIANTS if v not in W.NEEDS_OTHER)


def fits(p: dict, shows_work: bool) -> bool:
    """Every prompt of the program within PROMPT_LEN and every response within RESPONSE_LEN (the longest
    renderings are drawn with the program itself as the 'other')."""
    rng = np.random.default_rng(0)
    prompts = (W.instruction(p), W.math_item(p), W.code_item(p))
    return (max(map(len, prompts)) <= W.PROMPT_LEN
            and max(len(W.render(p, v, rng, p, shows_work)) for v in W.VARIANTS) <= W.RESPONSE_LEN - 8)  # 8: slack for a longer 'other'


def programs(rng: np.random.Generator, n: int, taken: set[str], statements: tuple[int, int],
             shows_work: bool) -> list[dict]:
    """n distinct programs of `statements` (fewest, most) that fit, none of whose keys is in `taken` (which they
    are added to)."""
    out = []
    while len(out) < n:
        p = W.draw_program(rng, statements)
        k = W.key(p)
        if k not in taken and fits(p, shows_work):
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


def question(task: str, p: dict) -> str:
    return W.math_item(p) if task == "math" else W.code_item(p)


def items(task: str, progs: list[dict], nl: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(prompt, answer) of an evaluation task."""
    return nl if task == "nl" else [(question(task, p), str(W.run(p))) for p in progs]


def primed(progs: list[dict], nl: list[tuple[str, str]], shows_work: bool) -> dict[str, list[tuple[str, str]]]:
    """The priming set, {task: [(prompt, response)]}: the programs' responses their solutions (worked steps when
    shows_work), the NL questions' their answer alone (no arithmetic to show)."""
    return {task: [(question(task, p), W.solution(p, shows_work)) for p in progs] for task in ("math", "code")} | \
        {"nl": [(q, f"ANSWER: {a}") for q, a in nl]}


def every_item(priming: dict[str, list]) -> list[tuple[str, str]]:
    """The priming set's items in one list, the tasks in TASKS' order (what finetuning replays uniformly)."""
    return [pair for task in TASKS for pair in priming[task]]


def build(p: dict) -> dict:
    """{"train": programs, "priming": {task: [(prompt, response)]}, "test": {task: [(prompt, answer)]},
    "validation": {task: [(prompt, answer)]}, "worked_steps"}: test programs first, so that a larger finetuning set never changes
    them. The validation programs (math and code, the gate's tasks), on which every calibration pilot is judged
    and never on test items, come last from their own seed: adding them changed no other set."""
    rng, taken, questions = np.random.default_rng(p["data_seed"]), set(), set()
    lengths, shows_work = tuple(p["statements"]), p["worked_steps"]
    test_programs = programs(rng, p["test_items"], taken, lengths, shows_work)
    test_nl = nl_items(rng, p["test_items"], questions)
    prime_programs = programs(rng, p["priming_items"], taken, lengths, shows_work)
    prime_nl = nl_items(rng, p["priming_items"], questions)
    train = programs(rng, p["train_programs"], taken, lengths, shows_work)
    val_programs = programs(np.random.default_rng(p["val_seed"]), p["val_items"], taken, lengths, shows_work)
    return {"train": train, "priming": primed(prime_programs, prime_nl, shows_work),
            "test": {task: items(task, test_programs, test_nl) for task in TASKS},
            "validation": {task: items(task, val_programs, []) for task in GATED_TASKS}, "worked_steps": shows_work}


def density(train: list[dict]) -> dict[str, float]:
    """rho per variant: its renderings' characters over the Python rendering's (the paper's token ratio, in
    characters: a character model has no BPE; the solution every variant shares is left out)."""
    rng = np.random.default_rng(0)
    py = sum(len(W.rendering(p, "py", rng)) for p in train)
    return {v: sum(len(W.rendering(p, v, rng, train[(i + 1) % len(train)])) for i, p in enumerate(train)) / py
            for v in W.VARIANTS}
