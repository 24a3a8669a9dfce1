"""The base model of one seed, trained once from scratch on real English (Jane Austen's six novels) mixed with the
priming set, and saved as a tensors-only checkpoint that every finetuning job of the seed loads."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import read_json, save_state
from workflow.core.step import Step, seed_everything
from workflow.lib import text
from workflow.lib.tinylm import parameter_count

from . import methods as M

READS = ("code_reasoning.model", "code_reasoning.base")


def main(argv=None):
    step = Step("code_reasoning", "base", __doc__)
    step.parser.add_argument("--sets", type=Path, required=True)
    step.parser.add_argument("--rdb", type=Path, required=True)
    step.parser.add_argument("--rdx", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    novels = text.austen_novels(args.rdb, args.rdx)
    prose = M.english("\n\n".join(novels[k] for k in sorted(novels)))
    vocab = M.vocab()
    model = M.build(p, len(vocab))
    loss, drilled = M.pretrain(model, vocab, prose, read_json(args.sets)["priming"], p, args.seed,
                               lambda s, v: step.curve("base_loss", s, v))
    step.log(f"the drill phase took {drilled} of {p['steps']} steps")
    meta = {"seed": args.seed, "final_loss": loss, "drill_steps_taken": drilled, "parameters": parameter_count(model),
            "prose_chars": len(prose)}
    save_state(args.out, model.state_dict(), meta)
    step.finish(metrics={"final_base_loss": loss, "drill_steps_taken": drilled, "parameters": parameter_count(model),
                         "prose_chars": len(prose)}, outputs=[args.out])


if __name__ == "__main__":
    main()
