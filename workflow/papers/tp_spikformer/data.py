"""The image set, (n, 1, side, side) float32 with splits train / validation / test (validation: held out of the
training images, for calibration; the test set is the claims' alone).

`source: canvas` (default) is the spec's "cluttered digits" (6.3): each of scikit-learn's 8x8 digits (in [0, 1])
pasted at a random position on a side x side canvas, with `fragments` crops (crop x crop) of other digits of the
same split at `intensity`, placed clear of the digit, and N(0, noise^2) pixel noise (not clipped); the 1,797 digits
split test / validation / training first, so no digit is seen in two splits, and each training digit pasted `copies`
times (its own position, clutter and noise each time). The clutter is what gives the pruning criteria
uninformative tokens to drop, as ImageNet's backgrounds do. `source: fashion`: class-balanced Fashion-MNIST
subsets resized to side x side by area averaging (28 -> 16)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step
from workflow.lib import images

READS = ("tp_spikformer.data",)
INK = 0.25  # a crop whose brightest pixel is under this is blank background, not clutter: drawn again


def resize(x: np.ndarray, side: int) -> np.ndarray:
    """Area-average (or nearest-upsample) (n, 1, h, w) images to (n, 1, side, side)."""
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(x)
    mode = "area" if side <= x.shape[-1] else "nearest"
    return F.interpolate(t, size=(side, side), mode=mode).numpy().astype(np.float32)


def hold_out(d: dict, n: int) -> dict:
    """The last `n` training images as the validation split (the training images come shuffled)."""
    cut = len(d["y_train"]) - n
    return d | {"x_train": d["x_train"][:cut], "y_train": d["y_train"][:cut],
                "x_val": d["x_train"][cut:], "y_val": d["y_train"][cut:]}


def fragment(digits: np.ndarray, own: int, crop: int, rng: np.random.Generator) -> np.ndarray:
    """A crop x crop piece of a random digit other than `own` ((n, h, w) digits), redrawn until it has ink."""
    while True:
        other = (own + 1 + rng.integers(len(digits) - 1)) % len(digits)
        r, c = rng.integers(0, digits.shape[-1] - crop + 1, size=2)
        piece = digits[other, r:r + crop, c:c + crop]
        if piece.max() >= INK:
            return piece


def spot(box: tuple[int, int, int], side: int, size: int, rng: np.random.Generator) -> tuple[int, int]:
    """A random (row, col) of a size x size square on the side x side canvas that misses the square `box` =
    (row, col, side) (one exists whenever side - box side >= 2 size - 1: plan.check)."""
    br, bc, bs = box
    while True:
        r, c = rng.integers(0, side - size + 1, size=2)
        if r + size <= br or r >= br + bs or c + size <= bc or c >= bc + bs:
            return r, c


def canvas(digits: np.ndarray, i: int, side: int, clutter: dict, rng: np.random.Generator) -> np.ndarray:
    """Digit `i` of (n, h, w) `digits` on a side x side canvas with its clutter, before the noise (`canvases`)."""
    h, crop = digits.shape[-1], clutter["crop"]
    out = np.zeros((side, side), np.float32)
    box = (*rng.integers(0, side - h + 1, size=2), h)
    for _ in range(clutter["fragments"]):
        piece = clutter["intensity"] * fragment(digits, i, crop, rng)
        r, c = spot(box, side, crop, rng)
        out[r:r + crop, c:c + crop] = np.maximum(out[r:r + crop, c:c + crop], piece)
    out[box[0]:box[0] + h, box[1]:box[1] + h] = digits[i]
    return out


def canvases(x: np.ndarray, y: np.ndarray, copies: int, side: int, clutter: dict, rng: np.random.Generator):
    """Every digit of (n, 1, h, w) `x` on `copies` canvases (clutter from the same split), plus the pixel noise:
    (x (n copies, 1, side, side), y)."""
    digits = x[:, 0]
    out = np.stack([canvas(digits, i, side, clutter, rng) for _ in range(copies) for i in range(len(digits))])
    out += rng.normal(0.0, clutter["noise"], out.shape).astype(np.float32)
    return out[:, None], np.tile(y, copies)


def image_set(p: dict, raw, rng: np.random.Generator) -> dict:
    """{x_train, y_train, x_val, y_val, x_test, y_test} of the params section `tp_spikformer.data`."""
    if p["source"] == "fashion":
        d = hold_out(images.fashion_splits(raw, p["train_per_class"], p["test_per_class"], rng), p["validation"])
        return {k: resize(v, p["side"]) if k.startswith("x_") else v for k, v in d.items()}
    d = hold_out(images.digits_split(p["digits_test"], rng), p["validation"])
    out = {}
    for split in ("train", "val", "test"):
        copies = p["copies"] if split == "train" else 1
        out[f"x_{split}"], out[f"y_{split}"] = canvases(d[f"x_{split}"], d[f"y_{split}"], copies, p["side"],
                                                        p["clutter"], rng)
    return out


def main(argv=None):
    step = Step("tp_spikformer", "data", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[])
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    d = image_set(p, args.raw, np.random.default_rng(p["seed"]))
    write_npz(args.out, **d)
    step.finish(metrics={f"n_{split}": len(d[f"y_{split}"]) for split in ("train", "val", "test")}, outputs=[args.out])


if __name__ == "__main__":
    main()
