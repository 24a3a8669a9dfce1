"""The paper's scores, without torch: the Soft QD score and its lower bounds, the QD score on a grid or CVT archive,
the Vendi score, the fixed evaluation archive, and the sigma sweep's rank correlation. Pure functions, no I/O.

  * soft_qd_score            -- S_sigma(theta) = int_[0,1]^m max_n f_n exp(-||b-b_n||^2 / 2 sigma^2) db
  * soft_qd_normalized       -- S / (2 pi sigma^2)^{m/2}  (-> sum_n f_n for distinct points as sigma -> 0)
  * soft_qd_lower_bound      -- S~ = sum f - sum_{i<j} sqrt(f_i f_j) exp(-||b_i-b_j||^2/gamma^2)
  * qd_score_grid / qd_score_cvt / cvt_centroids / vendi_score -- evaluation
  * ribs_cvt_centroids / approx_soft_qd_score -- the paper's evaluation archive and reported Soft QD value
  * spearman_vs_sigma2       -- claim C3's statistic over one seed's sigma sweep
"""
from __future__ import annotations

import math

import numpy as np

_RIBS_MSG = ("pyribs is not installed: `pip install ribs==0.12.0` (pulls numba 0.68 + llvmlite 0.50, "
             "numpy_groupies, sortedcontainers, array_api_compat) to run the MAP-Elites / CMA-MAE baselines.")


def require_ribs():
    """The ribs package, or an ImportError that says how to install it."""
    try:
        import ribs.archives, ribs.emitters, ribs.schedulers  # noqa: F401
        return ribs
    except ImportError as e:  # pragma: no cover - depends on env
        raise ImportError(_RIBS_MSG) from e


# --------------------------------------------------------------------------- Soft QD score
def _integration_points(m: int, grid_res: int, n_mc: int, seed: int):
    """Midpoint grid on [0,1]^m (if grid_res**m <= 4e6 and n_mc is None) else uniform MC points."""
    if n_mc is None and grid_res ** m <= 4_000_000:
        g = (np.arange(grid_res) + 0.5) / grid_res
        pts = np.stack(np.meshgrid(*([g] * m), indexing="ij"), -1).reshape(-1, m)
        return pts, 1.0 / grid_res ** m
    n = n_mc or 200_000
    pts = np.random.default_rng(seed).random((n, m))
    return pts, 1.0 / n


def soft_qd_score(f, b, sigma: float, grid_res: int = 400, n_mc: int | None = None, seed: int = 0,
                  chunk: int = 200_000, aggregate: str = "max") -> float:
    """Soft QD score S = int_{[0,1]^m} max_n f_n exp(-||b - b_n||^2 / (2 sigma^2)) db.

    f: (N,) fitness (>= 0 expected), b: (N, m) descriptors in [0,1]^m. Grid (midpoint) quadrature when
    grid_res**m <= 4e6, else Monte Carlo with n_mc points (fixed seed -> common random numbers, so the
    estimate is exactly monotone in the set). Empty set -> 0.
    aggregate="mean" replaces the max over solutions by their mean: a deliberately faulty score (not the paper's),
    the negative control that the property checks of claim C4 must catch.
    """
    if aggregate not in ("max", "mean"):
        raise ValueError(f"aggregate must be 'max' (the Soft QD score) or 'mean' (the faulty control), "
                         f"not {aggregate!r}")
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    if len(f) == 0:  # checked before the reshape: an empty (0, m) array cannot be reshaped to (0, -1)
        return 0.0
    b = np.asarray(b, dtype=np.float64).reshape(len(f), -1)
    m = b.shape[1]
    pts, w = _integration_points(m, grid_res, n_mc, seed)
    total = 0.0
    for s in range(0, len(pts), chunk):
        p = pts[s:s + chunk]
        v = np.zeros(len(p))
        for n in range(len(f)):  # loop over solutions keeps memory O(chunk)
            d2 = ((p - b[n]) ** 2).sum(1)
            bump = f[n] * np.exp(-d2 / (2 * sigma ** 2))
            if aggregate == "max":
                np.maximum(v, bump, out=v)
            else:
                v += bump / len(f)
        total += v.sum()
    return float(total * w)


def soft_qd_normalized(f, b, sigma: float, **kw) -> float:
    """S_sigma / (2 pi sigma^2)^{m/2}; tends to sum_n f_n (= QD score of a fine archive) as sigma -> 0."""
    m = np.asarray(b).reshape(len(np.asarray(f).reshape(-1)), -1).shape[1]
    return soft_qd_score(f, b, sigma, **kw) / (2 * math.pi * sigma ** 2) ** (m / 2)


def soft_qd_single_exact(f: float, b, sigma: float) -> float:
    """Closed form of S for a single solution on [0,1]^m (product of 1-D Gaussian integrals)."""
    b = np.atleast_1d(np.asarray(b, dtype=np.float64))
    from scipy.special import erf
    c = sigma * math.sqrt(math.pi / 2)
    per = c * (erf((1 - b) / (math.sqrt(2) * sigma)) + erf(b / (math.sqrt(2) * sigma)))
    return float(f * np.prod(per))


def soft_qd_lower_bound(f, b, gamma2: float) -> float:
    """S~ = sum_n f_n - sum_{i<j} sqrt(f_i^+ f_j^+) exp(-||b_i - b_j||^2 / gamma^2) (claim 2 of the spec)."""
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(len(f), -1)
    fp = np.sqrt(np.clip(f, 0, None))
    d2 = ((b[:, None] - b[None]) ** 2).sum(-1)
    k = np.exp(-d2 / gamma2)
    pair = np.triu(np.outer(fp, fp) * k, 1).sum()
    return float(f.sum() - pair)


# --------------------------------------------------------------------------- evaluation
def qd_score_grid(f, b, bins: int, ranges=(0.0, 1.0), offset: float = 0.0) -> dict:
    """Grid archive QD score: per cell keep the best (f - offset); QD = sum over filled cells.
    Returns {qd_score, coverage, n_filled, n_cells}."""
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(len(f), -1)
    lo, hi = ranges
    m = b.shape[1]
    ij = np.clip(np.floor((b - lo) / (hi - lo) * bins).astype(np.int64), 0, bins - 1)
    cell = np.ravel_multi_index(ij.T, (bins,) * m) if len(f) else np.zeros(0, np.int64)
    return _archive_stats(f - offset, cell, bins ** m)


def _archive_stats(val, cell, n_cells):
    best = {}
    for c, v in zip(cell.tolist(), val.tolist()):
        if c not in best or v > best[c]:
            best[c] = v
    return {"qd_score": float(sum(best.values())), "coverage": len(best) / n_cells,
            "n_filled": len(best), "n_cells": int(n_cells)}


def cvt_centroids(m: int, n_cells: int, samples: int = 20000, seed: int = 232323) -> np.ndarray:
    """CVT centroids in [0,1]^m by k-means on uniform samples (as ribs.CVTArchive; not bit-identical)."""
    from sklearn.cluster import KMeans
    pts = np.random.default_rng(seed).random((samples, m))
    km = KMeans(n_clusters=n_cells, n_init=1, max_iter=100, random_state=seed).fit(pts)
    return km.cluster_centers_


def qd_score_cvt(f, b, centroids, offset: float = 0.0) -> dict:
    """CVT archive QD score (nearest centroid). Returns {qd_score, coverage, n_filled, n_cells}."""
    from scipy.spatial import cKDTree
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    centroids = np.asarray(centroids, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64).reshape(len(f), centroids.shape[1])
    cell = cKDTree(centroids).query(b)[1] if len(f) else np.zeros(0, np.int64)
    return _archive_stats(f - offset, np.asarray(cell), len(centroids))


def vendi_score(b, sigma_v: float | None = None, max_n: int = 2000, seed: int = 0) -> float:
    """Vendi score exp(-sum lambda log lambda), lambda = eig(K/n), K = exp(-||b-b'||^2 / sigma_v^2),
    sigma_v default sqrt(m/6). Subsamples to max_n points (fixed seed)."""
    b = np.asarray(b, dtype=np.float64)
    if len(b) > max_n:
        b = b[np.random.default_rng(seed).choice(len(b), max_n, replace=False)]
    sv2 = (b.shape[1] / 6) if sigma_v is None else sigma_v ** 2
    K = np.exp(-((b[:, None] - b[None]) ** 2).sum(-1) / sv2)
    lam = np.clip(np.linalg.eigvalsh(K / len(b)), 0, None)
    lam = lam[lam > 1e-12]
    return float(np.exp(-(lam * np.log(lam)).sum()))


def ribs_cvt_centroids(m: int, n_cells: int = 512, samples: int = 20000, seed: int = 232323) -> np.ndarray:
    """The paper's fixed evaluation archive: ribs.CVTArchive(centroids=n_cells, ranges=[(0,1)]*m, seed, samples)."""
    require_ribs()
    from ribs.archives import CVTArchive
    return np.asarray(CVTArchive(solution_dim=0, centroids=n_cells, ranges=[(0, 1)] * m, seed=seed,
                                 samples=samples).centroids)


def approx_soft_qd_score(f, b, eps: float = 1e-6) -> float:
    """The paper's reported 'approx Soft QD score' (src/evaluate.py): the lower bound S~ on logit descriptors with
    gamma^2 = m/6, i.e. sum f - sum_{i<j} sqrt(f_i^+ f_j^+) exp(-||l_i - l_j||^2 / (m/6))."""
    b = np.asarray(b, dtype=np.float64)
    bc = np.clip(b, eps, 1 - eps)
    return soft_qd_lower_bound(f, np.log(bc) - np.log1p(-bc), b.shape[1] / 6.0)


def spearman_vs_sigma2(table):
    """Spearman rho of mean fitness and of Vendi against the sigma^2 label, for one seed and variant (a DataFrame
    with columns sigma2, mean_f, vendi; returns a Series indexed mean_f, vendi)."""
    return table[["sigma2", "mean_f", "vendi"]].corr(method="spearman").loc["sigma2", ["mean_f", "vendi"]]
