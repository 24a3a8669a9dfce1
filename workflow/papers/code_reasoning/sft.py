"""One variant of one seed: the seed's base model finetuned on that variant's responses (or, for `zeroshot`, not
finetuned), then scored on the test items of the three tasks by greedy decoding."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import load_state, read_json, write_json
from workflow.core.step import Step, seed_everything

from . import methods as M
from . import plan

READS = ("code_reasoning.model", "code_reasoning.sft")


def score(model, vocab, test: dict) -> tuple[dict, dict]:
    """(accuracy per task, the parsed answers per task). The tasks' prompts are decoded together, in chunks that span
    tasks where a task has fewer items than a chunk (the smoke profile's 20: one decoding instead of three)."""
    got = iter(M.answers(model, vocab, [q for pairs in test.values() for q, _ in pairs]))
    given = {task: [next(got) for _ in pairs] for task, pairs in test.items()}
    acc = {task: float(np.mean([g == a for g, (_, a) in zip(given[task], pairs)])) for task, pairs in test.items()}
    return acc, given


def main(argv=None):
    step = Step("code_reasoning", "sft", __doc__)
    step.parser.add_argument("--sets", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, required=True)
    step.parser.add_argument("--variant", required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    data = read_json(args.sets)
    vocab = M.vocab()
    model = M.build(p, len(vocab))
    model.load_state_dict(load_state(args.base)["state_dict"])
    loss = float("nan")
    if args.variant != plan.ZEROSHOT:
        loss = M.finetune(model, vocab, data["train"], data["priming"], args.variant, data["worked_steps"], p, args.seed,
                          lambda s, v: step.curve("sft_loss", s, v))
    model.eval()
    acc, given = score(model, vocab, data["test"])
    # The gate's model is also scored on the validation split: the calibration's metric, never read by a claim
    validation = score(model, vocab, data["validation"])[0] if args.variant == plan.GATED_VARIANT else {}
    write_json(args.out, {"variant": args.variant, "seed": args.seed, "accuracy": acc, "final_sft_loss": loss,
                          "answered": {t: float(np.mean([g is not None for g in a])) for t, a in given.items()},
                          "validation": validation})
    step.finish(metrics={f"acc_{t}": v for t, v in acc.items()} | {f"val_acc_{t}": v for t, v in validation.items()}
                | {"final_sft_loss": loss}, outputs=[args.out])


if __name__ == "__main__":
    main()
