"""One model (ARM, MDM or ReFusion) of one seed, trained once on the shared stream with its own objective, and saved
as a tensors-only checkpoint."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import read_json, save_state
from workflow.core.step import Step, seed_everything
from workflow.lib.tinylm import parameter_count

from . import methods as M

READS = ("refusion.data", "refusion.model", "refusion.train")


def main(argv=None):
    step = Step("refusion", "train", __doc__)
    step.parser.add_argument("--problems", type=Path, required=True)
    step.parser.add_argument("--model", choices=M.MODELS, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    sets = read_json(args.problems)
    held_out = {q for task in sets.values() for split in task.values() for q, _ in split}
    vocab = M.vocab()
    model = M.build(p, args.model, len(vocab))
    loss = M.train(model, args.model, p, args.seed, held_out, lambda s, v: step.curve("train_loss", s, v))
    meta = {"seed": args.seed, "model": args.model, "final_loss": loss, "parameters": parameter_count(model)}
    save_state(args.out, model.state_dict(), meta)
    step.finish(metrics={"final_train_loss": loss, "parameters": parameter_count(model)}, outputs=[args.out])


if __name__ == "__main__":
    main()
