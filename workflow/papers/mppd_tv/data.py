"""The image set of the runs: a class-balanced Fashion-MNIST subset (train from the training split, test from the
test split), or scikit-learn's 8x8 digits split 1400 / 397 (smoke). Images in [0, 1], (n, 1, side, side)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step
from workflow.lib import images

READS = ("mppd_tv.data",)


def main(argv=None):
    step = Step("mppd_tv", "data", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[])
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    rng = np.random.default_rng(p["seed"])
    d = images.image_set(p["source"], args.raw, p["train_per_class"], p["test_per_class"], p["digits_test"], rng)
    write_npz(args.out, **d)
    step.finish(metrics={"n_train": len(d["y_train"]), "n_test": len(d["y_test"]),
                         "pixels": int(np.prod(d["x_train"].shape[1:]))}, outputs=[args.out])


if __name__ == "__main__":
    main()
