"""Seeded list operations with an exact-match answer (ReFusion's MBPP/HumanEval analogue, spec shared/papers/
refusion.md 4.3): a list of six digits transformed by one position-local operation.

    prompt    rot2:348921?        (rev, rot1..rot5: rotate left by k, inc1..inc9: add k mod 10 to every digit)
    response  892134              then <eos> up to the generation length
"""
from __future__ import annotations

import re

import numpy as np

ALPHABET = "0123456789:?revotinc"
LENGTH = 6


def transform(op: str, digits: str) -> str:
    """The reference interpreter of one operation."""
    if op == "rev":
        return digits[::-1]
    m = re.fullmatch(r"(rot|inc)(\d)", op)
    if not m:
        raise ValueError(f"unknown list operation {op!r}")
    k = int(m.group(2))
    if m.group(1) == "rot":
        return digits[k:] + digits[:k]
    return "".join(str((int(d) + k) % 10) for d in digits)


def problem(rng: np.random.Generator) -> tuple[str, str]:
    kind = rng.choice(["rev", "rot", "inc"])
    op = "rev" if kind == "rev" else f"{kind}{rng.integers(1, 6 if kind == 'rot' else 10)}"
    digits = "".join(str(d) for d in rng.integers(0, 10, LENGTH))
    return f"{op}:{digits}?", transform(op, digits)


def solve(prompt: str) -> str:
    m = re.fullmatch(r"(\w+):(\d{6})\?", prompt)
    if not m:
        raise ValueError(f"not a list-operation prompt: {prompt!r}")
    return transform(m.group(1), m.group(2))
