"""Train one frozen base forecaster (DLinear or MLP+RevIN) for one data set and horizon; early stop on validation."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import read_npz, save_state, write_json
from workflow.core.step import Step, seed_everything

from . import datasets, models

READS = ("cosa.datasets.{dataset}.lookback", "cosa.base")


def main(argv=None):
    step = Step("cosa", "train_base", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--base", required=True, choices=["dlinear", "mlp"])
    step.parser.add_argument("--horizon", type=int, required=True)
    step.parser.add_argument("--seed", type=int, required=True, help="initialisation and mini-batch order")
    step.parser.add_argument("--out", type=Path, required=True, help="checkpoint (.pt, tensors only)")
    step.parser.add_argument("--summary", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    data = read_npz(args.data)
    series = data["series"]
    model = models.make_base(args.base, p["lookback"], args.horizon, series.shape[1], seed=args.seed)
    history = models.train_base(model, series, datasets.split_of(data), p["lookback"], args.horizon, epochs=p["epochs"],
                                lr=p["lr"], batch_size=p["batch_size"], patience=p["patience"], seed=args.seed,
                                progress=lambda e, tr, va: step.log(f"epoch {e}: train MSE {tr:.4f}  val MSE {va:.4f}"))
    meta = {"kind": args.base, "lookback": p["lookback"], "horizon": args.horizon, "channels": int(series.shape[1])}
    save_state(args.out, {k: v.detach().clone() for k, v in model.state_dict().items()}, meta)
    write_json(args.summary, meta | {k: v for k, v in history.items()})
    step.finish(metrics={"best_val_mse": history["best_val"], "epochs_run": history["epochs_run"]},
                curves={"train_mse": list(enumerate(history["train_loss"])), "val_mse": list(enumerate(history["val_loss"]))},
                outputs=[args.out, args.summary])


if __name__ == "__main__":
    main()
