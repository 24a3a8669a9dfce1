"""Time-series pieces shared by forecasting papers: chronological split and sliding windows.

``chrono_split`` is the ETT/PEMS convention (train | val | test in time order, the test part takes the
remainder); cosa and stbp both use it. ``sliding_windows`` cuts a (time, node) matrix into
``x_len -> y_len`` forecasting samples, each lying wholly inside one split part (the TrafficStream/STBP
data convention: no window crosses a split boundary).
"""
from __future__ import annotations

import numpy as np


def chrono_split(n: int, fractions=(0.6, 0.2, 0.2)) -> dict:
    """Chronological split: ``{"train": (0, a), "val": (a, b), "test": (b, n)}``,
    ``a = int(n f_train)``, ``b = int(n (f_train + f_val))``; the test part takes the remainder."""
    f = np.asarray(fractions, dtype=float)
    if len(f) != 3 or (f < 0).any() or not np.isclose(f.sum(), 1.0):
        raise ValueError("fractions must be three non-negative numbers summing to 1")
    a = int(n * f[0])
    b = int(n * (f[0] + f[1]))
    return {"train": (0, a), "val": (a, b), "test": (b, int(n))}


def sliding_windows(series: np.ndarray, part: tuple[int, int], x_len: int, y_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Every window of ``series[part[0]:part[1]]`` (shape (T, N)) as ``x (W, N, x_len)``, ``y (W, N, y_len)``.

    Window w covers steps ``s .. s + x_len + y_len - 1`` with ``s = part[0] + w``; stride 1, in time order.
    An empty pair (W = 0) comes back when the part is shorter than one window.
    """
    lo, hi = int(part[0]), int(part[1])
    seg = np.asarray(series)[lo:hi]
    span = x_len + y_len
    n_win = max(len(seg) - span + 1, 0)
    if n_win == 0:
        n = seg.shape[1] if seg.ndim == 2 else np.asarray(series).shape[1]
        return np.zeros((0, n, x_len)), np.zeros((0, n, y_len))
    idx = np.arange(n_win)[:, None] + np.arange(span)[None, :]  # (W, span)
    win = seg[idx].transpose(0, 2, 1)  # (W, N, span)
    return win[:, :, :x_len], win[:, :, x_len:]
