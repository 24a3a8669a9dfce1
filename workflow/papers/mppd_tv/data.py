"""The image set of the runs: a class-balanced Fashion-MNIST subset (train from the training split, test from the
test split), or scikit-learn's 8x8 digits split 1400 / 397 (smoke). Images in [0, 1], (n, 1, side, side)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step
from workflow.lib import images


def fashion(raw: list[Path], train_per_class: int, test_per_class: int, seed: int) -> dict:
    by_name = {p.stem: p for p in raw}
    rng = np.random.default_rng(seed)
    out = {}
    for split, per_class in (("train", train_per_class), ("test", test_per_class)):
        x, y = images.fashion(by_name[f"fashion_{split}_images"], by_name[f"fashion_{split}_labels"], per_class, rng)
        out[f"x_{split}"], out[f"y_{split}"] = x, y
    return out


def digits(test: int, seed: int) -> dict:
    x, y = images.digits()
    idx = np.random.default_rng(seed).permutation(len(y))
    te, tr = idx[:test], idx[test:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te]}


def main(argv=None):
    step = Step("mppd_tv", "data", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[])
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    if p["source"] == "fashion":
        d = fashion(args.raw, p["train_per_class"], p["test_per_class"], p["seed"])
    else:
        d = digits(p["digits_test"], p["seed"])
    write_npz(args.out, **d)
    step.finish(metrics={"n_train": len(d["y_train"]), "n_test": len(d["y_test"]),
                         "pixels": int(np.prod(d["x_train"].shape[1:]))}, outputs=[args.out])


if __name__ == "__main__":
    main()
