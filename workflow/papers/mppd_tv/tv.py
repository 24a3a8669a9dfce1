"""The exact 1-D toy of claim C2: ROF (TV-l2) against TV-l1 on rectangular bumps and on piecewise-constant signals
with impulsive noise, solved with cvxpy, and the two models' closed forms (no torch: the toy job does not pay for it)."""
from __future__ import annotations

import numpy as np


def bump_signal(widths, height: float, margin: int = 20) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Rectangular bumps of `height` on zero background, each alone in a block of 2 * max(width) + 2 margin, so
    that every bump has two jumps and no neighbour (spec). Returns the signal and each bump's [start, stop)."""
    block = 2 * max(widths) + 2 * margin
    f, spans = np.zeros(block * len(widths)), []
    for i, w in enumerate(widths):
        start = i * block + (block - w) // 2
        f[start:start + w] = height
        spans.append((start, start + w))
    return f, spans


def tv_denoise(f: np.ndarray, lam: float, fidelity: str) -> np.ndarray:
    """argmin_u sum |u_{i+1} - u_i| + lam * D(u, f): D = (1/2) sum (u - f)^2 (ROF) or sum |u - f| (TV-l1)."""
    import cvxpy as cp

    u = cp.Variable(len(f))
    tv = cp.norm1(cp.diff(u))
    data = 0.5 * cp.sum_squares(u - f) if fidelity == "l2" else cp.norm1(u - f)
    cp.Problem(cp.Minimize(tv + lam * data)).solve(solver=cp.CLARABEL)
    return np.asarray(u.value)


def bump_heights(u: np.ndarray, spans) -> list[float]:
    """The recovered height of each bump: the mean of u over the bump's support."""
    return [float(u[a:b].mean()) for a, b in spans]


def rof_height(width: int, lam: float, height: float) -> float:
    """Closed form: ROF lowers an isolated bump of width w by 2 / (lam w), down to 0."""
    return max(height - 2.0 / (lam * width), 0.0)


def tv_l1_height(width: int, lam: float, height: float) -> float:
    """Closed form (Chan & Esedoglu 2005): TV-l1 keeps an isolated bump intact iff w > 2 / lam, else removes it,
    whatever its height (contrast invariance)."""
    return height if width > 2.0 / lam else 0.0


def piecewise_signal(n: int, pieces: int, rng: np.random.Generator) -> np.ndarray:
    """A piecewise-constant signal: `pieces` segments of random lengths, levels uniform in [0, 1]."""
    cuts = np.sort(rng.choice(np.arange(10, n - 10), pieces - 1, replace=False))
    levels = rng.uniform(0, 1, pieces)
    return np.repeat(levels, np.diff(np.concatenate([[0], cuts, [n]])))


def noisy(clean: np.ndarray, impulse_frac: float, gauss_std: float, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise plus salt-and-pepper impulses (a fraction of samples set to 0 or 1)."""
    f = clean + gauss_std * rng.standard_normal(len(clean))
    hit = rng.random(len(clean)) < impulse_frac
    f[hit] = rng.integers(0, 2, hit.sum()).astype(float)
    return f


def best_lambda_mse(clean: np.ndarray, f: np.ndarray, fidelity: str, lams) -> tuple[float, float]:
    """(best MSE over the lambda grid, its lambda): each model at its own best lambda (spec)."""
    errors = [(float(np.mean((tv_denoise(f, lam, fidelity) - clean) ** 2)), lam) for lam in lams]
    return min(errors)
