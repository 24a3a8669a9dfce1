"""One masked-diffusion model per seed, trained once (LLaDA SFT, from an autoregressive model's weights when
hex.train.arm_init.steps > 0) and saved as a tensors-only checkpoint that the seed's decoding job loads."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import read_json, save_state
from workflow.core.step import Step, seed_everything
from workflow.lib import arith
from workflow.lib.tinylm import parameter_count

from . import methods as M

READS = ("hex.data", "hex.model", "hex.train")


def main(argv=None):
    step = Step("hex", "train", __doc__)
    step.parser.add_argument("--problems", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    sets = read_json(args.problems)
    held_out = {prompt for name in ("test", "validation", "long") for prompt, _ in sets[name]}
    vocab = arith.vocab()
    model = M.build(p, len(vocab))
    loss = M.train(model, p, args.seed, held_out, lambda s, v: step.curve("train_loss", s, v),
                   lambda s, v: step.curve("arm_init_loss", s, v))
    save_state(args.out, model.state_dict(), {"seed": args.seed, "final_loss": loss, "parameters": parameter_count(model)})
    step.finish(metrics={"final_train_loss": loss, "parameters": parameter_count(model)}, outputs=[args.out])


if __name__ == "__main__":
    main()
