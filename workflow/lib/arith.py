"""Seeded arithmetic chains with a chain of thought (the specs' `mini/arith.py`, shared by hex and the planned
refusion), their character vocabulary, and a reference interpreter that checks them.

A problem: a start digit and 2-5 operations, each `+k` or `-k` (k in 1..9), `*2` or `*3`, all mod 10:
    prompt    a=6,+5,*3,-5?
    response  +5=1,*3=3,-5=8#8        then <eos> up to the generation length
The response restates each operation beside its running value, so every step depends on its neighbours only
(bare running values, or values mod 100, stayed at 2-17 % accuracy in the specs' calibration). Prompts are
right-padded: operation i sits at prompt position 4 + 3 i, chain-of-thought step i at response position 5 i.
The operation kind (+, -, *) is drawn uniformly, then its operand.
"""
from __future__ import annotations

import re

import numpy as np

from .tokenizer import CharVocab

ALPHABET = "0123456789+-*=,?#a"
PROMPT_LEN, GEN_LEN = 24, 32   # the longest chain (5 operations) has a 19-character prompt and a 26-character answer


def vocab() -> CharVocab:
    return CharVocab(ALPHABET)


def draw_operation(rng: np.random.Generator) -> str:
    kind = rng.choice(["+", "-", "*"])
    return f"*{rng.choice([2, 3])}" if kind == "*" else f"{kind}{rng.integers(1, 10)}"


def apply(value: int, op: str) -> int:
    k = int(op[1:])
    return {"+": value + k, "-": value - k, "*": value * k}[op[0]] % 10


def problem(rng: np.random.Generator, min_ops: int = 2, max_ops: int = 5) -> tuple[str, str]:
    """(prompt, response) of one chain."""
    start = int(rng.integers(0, 10))
    ops = [draw_operation(rng) for _ in range(int(rng.integers(min_ops, max_ops + 1)))]
    steps, value = [], start
    for op in ops:
        value = apply(value, op)
        steps.append(f"{op}={value}")
    return f"a={start}," + ",".join(ops) + "?", ",".join(steps) + f"#{value}"


def distinct(draw, seed: int, n: int, exclude: frozenset = frozenset()) -> list[tuple[str, str]]:
    """n problems of a generator `draw(rng) -> (prompt, response)` with distinct prompts, none in `exclude` (the
    test set, when drawing a validation set)."""
    rng, out, seen = np.random.default_rng(seed), [], set(exclude)
    while len(out) < n:
        prompt, response = draw(rng)
        if prompt not in seen:
            seen.add(prompt)
            out.append((prompt, response))
    return out


def problems(seed: int, n: int, min_ops: int = 2, max_ops: int = 5, exclude: frozenset = frozenset()) -> list[tuple[str, str]]:
    """n distinct chains from a seeded stream (see distinct)."""
    return distinct(lambda rng: problem(rng, min_ops, max_ops), seed, n, exclude)


def solve(prompt: str) -> int:
    """The reference interpreter: the answer of a prompt, read from its text alone."""
    m = re.fullmatch(r"a=(\d),((?:[+\-*]\d,?)+)\?", prompt)
    if not m:
        raise ValueError(f"not a chain prompt: {prompt!r}")
    value = int(m.group(1))
    for op in m.group(2).split(","):
        value = apply(value, op)
    return value


def operations(prompt: str) -> int:
    return prompt.count(",")


def answer_of(response: str) -> int | None:
    """The digit after the first '#', or None (no answer: the decoder never got there, or wrote a non-digit)."""
    m = re.search(r"#(\d)", response)
    return int(m.group(1)) if m else None


def encode(vocab: CharVocab, pairs: list[tuple[str, str]]):
    """(prompts (N, PROMPT_LEN) right-padded, responses (N, GEN_LEN) <eos>-filled) as torch tensors."""
    import torch

    prompts = torch.tensor([vocab.encode(p, PROMPT_LEN) for p, _ in pairs])
    responses = torch.tensor([vocab.encode(r, GEN_LEN, fill=vocab.eos) for _, r in pairs])
    return prompts, responses


class Stream:
    """Fresh training problems every step from a seed and a generator draw(rng) -> (prompt, response), skipping the
    held-out prompts, encoded with `vocab`."""

    def __init__(self, seed: int, held_out: set[str], draw, vocab: CharVocab):
        self.rng, self.held_out, self.draw, self.vocab = np.random.default_rng(seed), held_out, draw, vocab

    def batch(self, size: int):
        pairs = []
        while len(pairs) < size:
            pair = self.draw(self.rng)
            if pair[0] not in self.held_out:
                pairs.append(pair)
        return encode(self.vocab, pairs)
