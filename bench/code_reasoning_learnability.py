"""Learnability probe of code_reasoning's task: can the shared tiny LM learn to execute the program world's code
items at all, and from how many samples? (PAPER.md, Calibration: probes P1-P6.)

    python bench/code_reasoning_learnability.py --name P1 --mix single=1 --steps 1600
    python bench/code_reasoning_learnability.py --name P5 --statements 3 --mix single=0.3,world2=0.3,world3=0.4 --steps 2400
    python bench/code_reasoning_learnability.py --name T2 --trace worked --mix world3=1 --statements 3 --steps 2000

A fresh model (d, layers, 4 heads; one torch thread) is trained on code items alone (`world.code_item` ->
`ANSWER: v`, the priming set's code format), from a stream of freshly drawn programs, and read every steps / 8 on
300 held-out programs by teacher forcing: the share of answer digits right. The item kinds of --mix:
  single  `x = c` then `y = (x +- k) % 10`, print(y): the one arithmetic step, with random variable names (2,880
          programs, 300 of them held out);
  worldN  the world's own programs of N statements (`world.draw_program`), the held-out ones never drawn.
Validation: the single-step programs when --mix is only `single`, else the world's programs of --statements.
--shortcut-free drops the world's programs whose last statement sets a constant (their answer is in the text).
--trace values|worked: the response shows the execution trace (`world.trace`) or the worked steps (`world.worked`)
before the answer, and validation reads the answer of a greedy completion (probes T1-T3).
Prints one line per read-out: name, step, mean training loss, validation accuracy, seconds. No claim metric, no
test item is read: a probe of the task, before any pilot of the pipeline.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workflow.lib.tinylm import Config, Schedule, TinyLM, fit, next_token_loss  # noqa: E402
from workflow.papers.code_reasoning import methods as M  # noqa: E402
from workflow.papers.code_reasoning import world as W  # noqa: E402

NAMES = "abcd"
TRACE = False  # --trace
SINGLE = [(c, s, k, x, y) for c in range(10) for s in "+-" for k in range(1, 10) for x in NAMES for y in NAMES]


def single_item(c: int, s: str, k: int, x: str, y: str) -> tuple[str, int, str]:
    v = (c + k if s == "+" else c - k) % 10
    return f"{x} = {c}\n{y} = ({x}{s}{k}) % 10\nprint({y})\n# output?", v, f"{x}={c} {y}={v}"


def world_item(program: dict) -> tuple[str, int, str]:
    return W.code_item(program), W.run(program), (W.worked if TRACE == "worked" else W.trace)(program)


def draw_world(rng: np.random.Generator, statements: int, shortcut_free: bool) -> dict:
    """A world program of `statements` statements; shortcut_free: none whose last statement sets a constant (the
    copy shortcut: its answer is in the program's text)."""
    while True:
        p = W.draw_program(rng, (statements, statements))
        if not (shortcut_free and p["stmts"][-1][0] == "set") and len(W.code_item(p)) <= W.PROMPT_LEN:
            return p


def as_pair(item: tuple[str, int, str]) -> tuple[str, str]:
    """(prompt, answer, trace) -> (prompt, response): the response the priming set's code items end with, after
    the worked steps when --trace."""
    return item[0], f"{item[2]} ANSWER: {item[1]}" if TRACE else f"ANSWER: {item[1]}"


def held_out_world(statements: int, shortcut_free: bool, n: int = 300) -> list[dict]:
    rng, out = np.random.default_rng(99), {}
    while len(out) < n:
        p = draw_world(rng, statements, shortcut_free)
        out.setdefault(W.key(p), p)
    return list(out.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", default="probe")
    ap.add_argument("--mix", default="single=1", help="KIND=WEIGHT,... (kinds: single, world2, world3, world4)")
    ap.add_argument("--statements", type=int, default=3, help="the world programs validated on")
    ap.add_argument("--steps", type=int, default=1600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--prompt-len", type=int, default=W.PROMPT_LEN, help="the prompt's padded length")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shortcut-free", action="store_true", help="no world program ends by setting a constant")
    ap.add_argument("--trace", choices=("values", "worked"), help="responses show the execution trace (values) or "
                    "the worked steps before the answer; read by greedy decoding")
    a = ap.parse_args()
    global TRACE
    TRACE = a.trace
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    W.PROMPT_LEN, W.RESPONSE_LEN = a.prompt_len, 160 if a.trace else 16  # `ANSWER: v`, after the trace if any
    mix = {kind: float(w) for kind, w in (part.split("=") for part in a.mix.split(","))}
    kinds, weights = list(mix), np.array(list(mix.values())) / sum(mix.values())

    order = rng.permutation(len(SINGLE))
    single_val, single_train = [SINGLE[i] for i in order[:300]], [SINGLE[i] for i in order[300:]]
    world_val = held_out_world(a.statements, a.shortcut_free)
    held = {W.key(p) for p in world_val}

    def draw(kind: str) -> tuple[str, int]:
        if kind == "single":
            return single_item(*single_train[rng.integers(len(single_train))])
        n = int(kind.removeprefix("world"))
        while True:
            p = draw_world(rng, n, a.shortcut_free)
            if W.key(p) not in held:
                return world_item(p)

    val = [as_pair(single_item(*t)) for t in single_val] if kinds == ["single"] else \
        [as_pair(world_item(p)) for p in world_val]
    vocab = M.vocab()
    model = TinyLM(Config(vocab=len(vocab), d=a.d, layers=a.layers, heads=4, causal=True,
                          max_positions=W.PROMPT_LEN + W.RESPONSE_LEN))
    digit = len("ANSWER: ")

    @torch.no_grad()
    def accuracy() -> float:
        if TRACE:  # the worked steps are the model's own: greedy decoding
            model.eval()
            got = M.answers(model, vocab, [q for q, _ in val])
            model.train()
            return float(np.mean([g == r.rsplit(" ", 1)[1] for g, (_, r) in zip(got, val)]))
        model.eval()
        x, y = M.encode(vocab, val)
        logits = model(torch.cat([x, y[:, :-1]], 1))[:, W.PROMPT_LEN - 1:]
        model.train()
        return float((logits[:, digit].argmax(-1) == y[:, digit]).float().mean())

    def batch_loss():
        batch = [as_pair(draw(k)) for k in rng.choice(kinds, size=a.batch, p=weights)]
        return next_token_loss(model, *M.encode(vocab, batch), vocab.eos)

    t0 = time.time()
    fit(model, batch_loss, Schedule(a.steps, a.lr, 0.01, 50, max(1, a.steps // 8)),
        lambda step, loss: print(a.name, step, round(loss, 3), "val", round(accuracy(), 3),
                                  round(time.time() - t0), flush=True))


if __name__ == "__main__":
    main()
