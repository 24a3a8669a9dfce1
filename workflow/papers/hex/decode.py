"""Every decoder on one seed's model: the greedy ones on the validation problems first (they choose
self-consistency's block), then all of them on the test problems and on the held-out longer chains. One row per
(decoder, split, problem), and the <eos>-filling curve of every greedy decoder on the test problems (the collapse
figure)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import load_state, read_json, write_text
from workflow.core.step import Step, seed_everything
from workflow.lib import arith

from . import methods as M
from . import plan

READS = ("hex.model", "hex.decode")


def decode_all(model, sets: dict, decode: dict, seed: int, vocab, log) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """(rows, eos curves, self-consistency's block)."""
    val = [row for spec in M.decoders(decode, None)
           for row in M.run(model, sets["validation"], spec, decode["steps"], seed, vocab)[0]]
    sc_block = M.best_block(val, decode["fixed_blocks"])
    log(f"self-consistency block (best greedy fixed block on validation): {sc_block}")
    rows, curves = [dict(r, split="validation") for r in val], []
    for split in plan.JUDGED:
        for spec in M.decoders(decode, sc_block):
            got, curve = M.run(model, sets[split], spec, decode["steps"], seed, vocab)
            rows += [dict(r, split=split) for r in got]
            if split == "test" and spec["temperature"] == 0:
                curves += curve
    return pd.DataFrame(rows).assign(seed=seed), pd.DataFrame(curves).assign(seed=seed), sc_block


def main(argv=None):
    step = Step("hex", "decode", __doc__)
    step.parser.add_argument("--problems", type=Path, required=True)
    step.parser.add_argument("--model", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    step.parser.add_argument("--eos", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    vocab = arith.vocab()
    model = M.build(p, len(vocab))
    model.load_state_dict(load_state(args.model)["state_dict"])
    model.eval()
    rows, curves, sc_block = decode_all(model, read_json(args.problems), p, args.seed, vocab, step.log)
    write_text(args.out, rows.to_csv(index=False, float_format="%.6g"))
    write_text(args.eos, curves.to_csv(index=False, float_format="%.6g"))
    test = rows[rows.split.eq("test")]
    metrics = {f"acc_{d.replace('/', '_')}": float(g.correct.mean()) for d, g in test.groupby("decoder")
               if not d.startswith(("paper/", "small/", "sc"))}
    step.finish(metrics=metrics | {"sc_block": sc_block}, outputs=[args.out, args.eos])


if __name__ == "__main__":
    main()
