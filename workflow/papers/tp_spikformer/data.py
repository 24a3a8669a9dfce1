"""The image set: a class-balanced Fashion-MNIST subset resized to side x side by area averaging (28 -> 16: the stem's
pooling then gives the spec's 8 x 8 = 64 tokens), or the 8x8 digits upsampled (smoke). Images in [0, 1],
(n, 1, side, side)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step
from workflow.lib import images

READS = ("tp_spikformer.data",)


def resize(x: np.ndarray, side: int) -> np.ndarray:
    """Area-average (or nearest-upsample) (n, 1, h, w) images to (n, 1, side, side)."""
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(x)
    mode = "area" if side <= x.shape[-1] else "nearest"
    return F.interpolate(t, size=(side, side), mode=mode).numpy().astype(np.float32)


def main(argv=None):
    step = Step("tp_spikformer", "data", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[])
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    rng = np.random.default_rng(p["seed"])
    d = images.image_set(p["source"], args.raw, p["train_per_class"], p["test_per_class"], p["digits_test"], rng)
    d["x_train"], d["x_test"] = resize(d["x_train"], p["side"]), resize(d["x_test"], p["side"])
    write_npz(args.out, **d)
    step.finish(metrics={"n_train": len(d["y_train"]), "n_test": len(d["y_test"])}, outputs=[args.out])


if __name__ == "__main__":
    main()
