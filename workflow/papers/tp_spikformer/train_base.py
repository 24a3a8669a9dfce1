"""The dense spiking transformer of one seed, trained once (AdamW, one-cycle) and saved as a tensors-only checkpoint;
every pruning evaluation of the seed reuses it frozen (the method is training-free). Its accuracy on the validation
split is what calibration reads (PAPER.md)."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import read_npz, save_state
from workflow.core.step import Step, seed_everything

from . import methods as M

READS = ("tp_spikformer.model", "tp_spikformer.train")


def main(argv=None):
    step = Step("tp_spikformer", "train_base", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    d = read_npz(args.data)
    classes = int(d["y_train"].max()) + 1
    model = M.build(p, classes)
    curves = M.train(model, d["x_train"], d["y_train"], p, args.seed, step.log)
    acc = M.dense_accuracy(model, d["x_val"], d["y_val"])  # the test set is the claims' (the prune step reads it)
    save_state(args.out, model.state_dict(), {"classes": classes, "val_acc": acc, "seed": args.seed})
    step.finish(metrics={"dense_val_acc": acc}, curves=curves, outputs=[args.out])


if __name__ == "__main__":
    main()
