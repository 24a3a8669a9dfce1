"""The image sets: TexturedDigits-16 (the spec's controlled set) and Fashion-16 (real photographs of clothes).

TexturedDigits-16: scikit-learn's 1,797 8x8 digits, bilinearly upsampled to a 16x16 stroke mask s, rendered in
colour: x = s * fg + (1 - s) * (bg + texture) + noise, clipped to [0, 1], where fg is an HSV colour (hue
class / 10 + U[-hue_spread, hue_spread] mod 1, s ~ U[.6,1], v ~ U[.7,1]), bg the same hue shifted by U[.25,.75],
the texture a sinusoid of 1-4 cycles per 16 px at 0/45/90/135 degrees (amplitude 0.15), noise N(0, 0.02).
hue_spread = 0.5 is the spec's set, colour drawn independently of the digit (uniform hue), where the paper's
motivating observation (patches sharing a semantic code look alike) is false by construction; below 0.5 the colour
depends on the class, as it does in natural images, and texture stays pixel detail a semantic code cannot carry.
Split by original digit (no digit in two splits). Fashion-16: Fashion-MNIST (the catalog's IDX files) resized to
16x16 with skimage.transform.resize (anti-aliased), grey copied to three channels.

Every image comes with attributes: the class and the two yes/no questions of the understanding probe, and the
nuisance bins the independent evaluator is trained on (hue bin, texture orientation; for Fashion only the class).
"""
from __future__ import annotations

import colorsys

import numpy as np

SIDE = 16
ORIENTATIONS = (0, 45, 90, 135)
HUE_BINS = 6
FOOTWEAR = (5, 7, 9)   # Fashion-MNIST: sandal, sneaker, ankle boot
UPPER_BODY = (0, 2, 4, 6)  # T-shirt/top, pullover, coat, shirt


def digit_masks() -> tuple[np.ndarray, np.ndarray]:
    """(16x16 stroke masks in [0, 1], labels) of scikit-learn's 8x8 digits, bilinearly upsampled."""
    import torch
    from torch.nn import functional as F

    from workflow.lib.images import digits

    x, y = digits()
    up = F.interpolate(torch.from_numpy(x), size=(SIDE, SIDE), mode="bilinear", align_corners=False)
    return up[:, 0].numpy().clip(0, 1), y


def render(masks: np.ndarray, labels: np.ndarray, hue_spread: float,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Colour images (n, 3, 16, 16) of the masks with fresh nuisances, the hue within hue_spread of the class's
    (label / 10), and their (hue bin, orientation index)."""
    n = len(masks)
    hue = (labels / 10 + rng.uniform(-hue_spread, hue_spread, n)) % 1.0
    fg = np.array([colorsys.hsv_to_rgb(h, s, v) for h, s, v in
                   zip(hue, rng.uniform(.6, 1, n), rng.uniform(.7, 1, n))], dtype=np.float32)
    bg_hue = (hue + rng.uniform(.25, .75, n)) % 1.0
    bg = np.array([colorsys.hsv_to_rgb(h, s, v) for h, s, v in
                   zip(bg_hue, rng.uniform(.3, .7, n), rng.uniform(.3, .6, n))], dtype=np.float32)
    freq = rng.integers(1, 5, n)
    orient = rng.integers(0, len(ORIENTATIONS), n)
    theta = np.deg2rad(np.array(ORIENTATIONS)[orient])
    yy, xx = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32)
    phase = (np.cos(theta)[:, None, None] * xx + np.sin(theta)[:, None, None] * yy) * freq[:, None, None] / SIDE
    texture = 0.15 * np.sin(2 * np.pi * phase + rng.uniform(0, 2 * np.pi, n)[:, None, None])
    s = masks[:, None]
    x = s * fg[:, :, None, None] + (1 - s) * (bg[:, :, None, None] + texture[:, None])
    x = x + rng.normal(0, 0.02, x.shape)
    hue_bin = np.minimum((hue * HUE_BINS).astype(np.int64), HUE_BINS - 1)
    return x.clip(0, 1).astype(np.float32), np.stack([hue_bin, orient], 1)


def questions(dataset: str, y: np.ndarray) -> np.ndarray:
    """The probe's three targets per image: the class and two yes/no questions about it."""
    if dataset == "digits":
        return np.stack([y, y % 2 == 0, y > 4], 1).astype(np.int64)
    return np.stack([y, np.isin(y, FOOTWEAR), np.isin(y, UPPER_BODY)], 1).astype(np.int64)


def textured_digits(n_aug: int, val_frac: float, test_frac: float, hue_spread: float,
                    rng: np.random.Generator) -> dict:
    """{split: (x, y, nuisance, mask)} with n_aug renderings of each digit, split by original digit."""
    masks, y = digit_masks()
    order = rng.permutation(len(y))
    n_test, n_val = int(round(test_frac * len(y))), int(round(val_frac * len(y)))
    parts = {"test": order[:n_test], "val": order[n_test:n_test + n_val], "train": order[n_test + n_val:]}
    out = {}
    for split, idx in parts.items():
        idx = np.repeat(idx, n_aug)
        x, nuisance = render(masks[idx], y[idx], hue_spread, rng)
        out[split] = {"x": x, "y": y[idx], "nuisance": nuisance, "mask": masks[idx].astype(np.float32)}
    return out


def fashion16(raw, train_per_class: int, test_per_class: int, val_frac: float, rng: np.random.Generator) -> dict:
    """Class-balanced Fashion-MNIST subsets resized to 16x16, grey in three channels; val drawn from train."""
    from skimage.transform import resize

    from workflow.lib.images import fashion_splits

    d = fashion_splits(raw, train_per_class, test_per_class, rng)
    out = {}
    for split in ("train", "test"):
        x = d[f"x_{split}"][:, 0]
        small = np.stack([resize(im, (SIDE, SIDE), anti_aliasing=True) for im in x]).astype(np.float32)
        out[split] = {"x": np.repeat(small[:, None], 3, axis=1), "y": d[f"y_{split}"]}
    n_val = int(round(val_frac * len(out["train"]["y"])))
    tr = out["train"]
    out["val"] = {k: v[:n_val] for k, v in tr.items()}
    out["train"] = {k: v[n_val:] for k, v in tr.items()}
    for part in out.values():
        part["nuisance"] = np.zeros((len(part["y"]), 0), np.int64)
    return out
