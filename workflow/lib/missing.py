"""Seeded missingness masks for incomplete multi-view / multi-label data (1 = observed, 0 = missing).

The protocol of the incomplete multi-view multi-label literature (iMVWL, DICNet, SCSD generators): every view of
every sample is missing independently with probability `rate`, resampled so that each sample keeps at least one
view; every label entry of the training set is unobserved with probability `rate`. Any paper that simulates
missing views, missing labels or missing features can use these.
"""
from __future__ import annotations

import numpy as np


def _check_rate(rate: float, what: str) -> None:
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"{what} missing rate must lie in [0, 1), got {rate}. Fix the rate in params.yaml.")


def view_mask(n: int, n_views: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    """[n, V] 0/1: each entry missing with prob. `rate`; a row left with no view is redrawn until it has one.

    Redrawing (not forcing one random view on) keeps every observed pattern equally likely given >= 1 view,
    as the DICNet/SCSD mask generators do. The expected missing fraction is therefore a little below `rate`.
    """
    _check_rate(rate, "view")
    if n_views < 1:
        raise ValueError("view_mask needs at least one view")
    mask = (rng.random((n, n_views)) >= rate).astype(np.float32)
    empty = mask.sum(1) == 0
    while empty.any():
        mask[empty] = (rng.random((int(empty.sum()), n_views)) >= rate).astype(np.float32)
        empty = mask.sum(1) == 0
    return mask


def label_mask(shape: tuple[int, int], rate: float, rng: np.random.Generator) -> np.ndarray:
    """[n, L] 0/1: each label entry observed with prob. 1 - `rate` (missing labels are unknown, not negative)."""
    _check_rate(rate, "label")
    return (rng.random(shape) >= rate).astype(np.float32)


def flip_entries(y: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """A copy of binary `y` with each entry flipped with prob. `rate` (annotation noise)."""
    _check_rate(rate, "flip")
    flips = rng.random(y.shape) < rate
    return np.where(flips, 1 - y, y).astype(y.dtype)
