"""Diagnostic of code_reasoning's base models: do they know the table of single-digit sums mod 10? (PAPER.md,
Results: the plateau is all or nothing.)

    python bench/code_reasoning_sums.py results/code_reasoning/base/s0.pt results/code_reasoning/base/s1.pt

Each base greedily completes the validation items (code and math) of results/code_reasoning/data/sets.json, and
every operation its worked steps write (`7+9=6`, `b>6=8>6=yes` aside) is judged against its own operands: the share
of right results per operator, and the answers' accuracy beside it. No test item and no claim metric is read.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workflow.core.io import load_state, read_json  # noqa: E402
from workflow.core.params import load  # noqa: E402
from workflow.papers.code_reasoning import methods as M  # noqa: E402
from workflow.papers.code_reasoning import world as W  # noqa: E402

OPERATION = re.compile(r"=(\d)([+-])(\d)=(\d)(?![\d>])")  # the digits of one worked operation and its result


def operations(completion: str) -> list[tuple[str, bool]]:
    """(operator, result right given the operands written) for every operation of a completion's worked steps."""
    return [(op, (int(a) + (int(b) if op == "+" else -int(b))) % 10 == int(v))
            for a, op, b, v in OPERATION.findall(completion.split("\nANSWER")[0])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bases", type=Path, nargs="+", help="base checkpoints (results/code_reasoning/base/s*.pt)")
    ap.add_argument("--sets", type=Path, default=ROOT / "results/code_reasoning/data/sets.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    validation = read_json(a.sets)["validation"]
    vocab, sizes = M.vocab(), load(root=ROOT)["code_reasoning"]["model"]
    for path in a.bases:
        model = M.build(sizes, len(vocab))
        model.load_state_dict(load_state(path)["state_dict"])
        model.eval()
        for task, pairs in validation.items():
            completions = M.completions(model, vocab, [q for q, _ in pairs])
            ops = [o for c in completions for o in operations(c)]
            right = {op: sum(ok for o, ok in ops if o == op) for op in "+-"}
            count = {op: sum(o == op for o, _ in ops) for op in "+-"}
            answers = sum(W.answer_of(c) == answer for c, (_, answer) in zip(completions, pairs)) / len(pairs)
            print(f"{path} {task}: answers {answers:.2f}; sums right {right['+']}/{count['+']}, "
                  f"differences right {right['-']}/{count['-']}", flush=True)


if __name__ == "__main__":
    main()
