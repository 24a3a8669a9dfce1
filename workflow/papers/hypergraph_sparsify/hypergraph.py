"""The hypergraph of this paper and its linear algebra: the representation, the planted stream generator, energies,
Laplacians, effective resistances and the space accounting (spec sections 2.2-2.3). Pure functions, no file I/O;
every random choice comes from ``np.random.default_rng(seed)`` (``seed`` may also be a ``np.random.Generator``).

Cohen-Addad, Woodruff, Xie, Zhou, "Nearly space-optimal graph and hypergraph sparsification in insertion-only
streams" (arXiv 2510.18180, ICLR 2026). Official code: not released. Written from the spec
``shared/papers/hypergraph_sparsify.md``. Run numpy with one thread (``OMP_NUM_THREADS=1``).

Representation
--------------
A hypergraph ``H`` is a dict of arrays (npz-friendly), hyperedges in **stream (arrival) order**:
``verts`` (m, r) int64 padded with -1 at the end of each row, ``sizes`` (m,), ``weights`` (m,),
``n`` (int), and for planted instances ``community`` (n,), ``side`` (n,) (planted bisection),
``is_bridge`` (m,). A (re)weighted sub-hypergraph / sparsifier is ``(idx, weight)``: indices into the
stream plus new weights (every algorithm here stores original hyperedges with new weights).

Energy (the quantity a spectral sparsifier preserves, spec 2.2)::

    Q_H(x) = sum_e w_e max_{u,v in e} (x_u - x_v)^2 = sum_e w_e (max_{u in e} x_u - min_{u in e} x_u)^2

  * ``planted_hypergraph_stream(n, m, r, seed, ...) -> H``  -- spec 2.3 generator (instances G/H3/H5), used by
    ``instances.make_stream``; ``subhypergraph``; ``coalesce(verts, weights)`` merges parallel hyperedges (exact
    for Q_H).
  * ``hyper_energy(verts, weights, X)``, ``hyper_energy_grad(...)``, ``hyperedge_pairs``, ``pair_laplacian``,
    ``clique_laplacian``, ``effective_resistances``.
  * ``space_bits``, ``rho_from_eps``, ``merge_block_size`` (B = ceil(rho_reduce (n - 1)), a rule; it was a tuned
    2500 before), ``growth_ratio`` (C2).
"""

from __future__ import annotations

import math

import numpy as np

WORD_BITS = 64


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


# ----------------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------------

def planted_hypergraph_stream(n: int = 40, m: int = 4000, r: int = 3, seed=0, k: int = 4, n_bridges: int = 6,
                              p_in: float = 0.85, w_range=(1.0, 10.0), order: str = "random") -> dict:
    """Planted-community hyperedge stream (spec 2.3).

    Vertices are split into ``k`` contiguous communities (``community[i] = i*k // n``); the planted
    bisection is ``side = community >= k/2``. Each of the ``m - n_bridges`` regular hyperedges has size
    ``|e| ~ U{2..r}``; with prob ``p_in`` its vertices are distinct draws from one uniformly chosen
    community, else from one uniformly chosen side (so no regular hyperedge crosses the bisection).
    The ``n_bridges`` bridge hyperedges contain >= 1 vertex of each side (the only crossing ones).
    Weights ``w_e ~ LogUniform[w_range]``. ``order``: "random" (uniform permutation) or "bridges_last"
    (random permutation of regular hyperedges, then the bridges).

    Returns ``H`` = dict(verts (m, r) int64 -1 padded, sizes (m,), weights (m,), is_bridge (m,) bool,
    community (n,), side (n,), n, r).
    """
    rng = _rng(seed)
    n, m, r, k = int(n), int(m), int(r), int(k)
    if r < 2 or k < 2 or n_bridges > m or m < 1:
        raise ValueError("need r >= 2, k >= 2, 1 <= m, n_bridges <= m")
    community = (np.arange(n) * k) // n
    side = (community >= k // 2).astype(np.int64)
    pools = [np.flatnonzero(community == c) for c in range(k)] + [np.flatnonzero(side == s) for s in (0, 1)]
    if r > min(len(p) for p in pools):
        raise ValueError("rank r exceeds the smallest community size")
    m_reg = m - int(n_bridges)
    sizes = rng.integers(2, r + 1, size=m)
    verts = np.full((m, r), -1, dtype=np.int64)
    inside = rng.random(m_reg) < p_in
    pool_id = np.where(inside, rng.integers(0, k, m_reg), k + rng.integers(0, 2, m_reg))
    for g, pool in enumerate(pools):
        rows = np.flatnonzero(pool_id == g)
        if rows.size:
            pick = np.argsort(rng.random((rows.size, pool.size)), axis=1)[:, :r]
            verts[rows] = pool[pick]
    s0, s1 = pools[k], pools[k + 1]
    for row in range(m_reg, m):
        a, b = rng.choice(s0), rng.choice(s1)
        rest = np.setdiff1d(np.arange(n), [a, b])
        verts[row] = np.concatenate([[a, b], rng.permutation(rest)[: r - 2]])
    verts[np.arange(r)[None, :] >= sizes[:, None]] = -1
    lo, hi = np.log(w_range[0]), np.log(w_range[1])
    weights = np.exp(rng.uniform(lo, hi, size=m))
    is_bridge = np.zeros(m, dtype=bool)
    is_bridge[m_reg:] = True
    if order == "random":
        perm = rng.permutation(m)
    elif order == "bridges_last":
        perm = np.concatenate([rng.permutation(m_reg), m_reg + rng.permutation(m - m_reg)])
    else:
        raise ValueError(f"unknown order {order!r}")
    return {"verts": verts[perm], "sizes": sizes[perm], "weights": weights[perm], "is_bridge": is_bridge[perm],
            "community": community, "side": side, "n": n, "r": r}


def subhypergraph(H: dict, idx, weight=None) -> dict:
    """The hypergraph made of stream positions ``idx`` (weights ``weight`` or the original ones)."""
    idx = np.asarray(idx, dtype=np.int64)
    out = {key: H[key] for key in ("n", "r", "community", "side") if key in H}
    out["verts"] = np.asarray(H["verts"])[idx]
    out["sizes"] = np.asarray(H["sizes"])[idx]
    out["weights"] = np.asarray(H["weights"], float)[idx] if weight is None else np.asarray(weight, float)
    if "is_bridge" in H:
        out["is_bridge"] = np.asarray(H["is_bridge"])[idx]
    return out


def coalesce(verts, weights):
    """Merge hyperedges with equal vertex sets (weights add up); exact for ``Q_H`` and for cuts.

    Returns ``(verts_c, weights_c)`` with each row sorted ascending, -1 padding at the end."""
    V = np.asarray(verts, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    if V.shape[0] == 0:
        return V.copy(), w.copy()
    big = np.iinfo(np.int64).max
    S = np.sort(np.where(V < 0, big, V), axis=1)
    uniq, inv = np.unique(S, axis=0, return_inverse=True)
    wc = np.bincount(inv.ravel(), weights=w, minlength=uniq.shape[0])
    uniq[uniq == big] = -1
    return uniq, wc


# ----------------------------------------------------------------------------------------------------
# energies, Laplacians, resistances
# ----------------------------------------------------------------------------------------------------

def _filled(verts) -> np.ndarray:
    V = np.asarray(verts, dtype=np.int64)
    return np.where(V < 0, V[:, :1], V)


def hyper_energy(verts, weights, X, chunk: int = 4096) -> np.ndarray:
    """``Q_H(x) = sum_e w_e (max_{u in e} x_u - min_{u in e} x_u)^2`` for each column x of ``X`` (n, p)
    (or a single vector). Returns (p,) (or a float)."""
    X = np.asarray(X, dtype=float)
    one = X.ndim == 1
    X2 = X[:, None] if one else X
    V = _filled(verts)
    w = np.asarray(weights, dtype=float)
    out = np.zeros(X2.shape[1])
    for s in range(0, V.shape[0], chunk):
        vals = X2[V[s:s + chunk]]
        d = vals.max(axis=1) - vals.min(axis=1)
        out += w[s:s + chunk] @ (d * d)
    return float(out[0]) if one else out


def hyper_energy_grad(verts, weights, X, chunk: int = 4096):
    """``(Q_H(X), grad)``: grad[:, j] = sum_e 2 w_e (x_a - x_b)(1_a - 1_b), a/b = argmax/argmin of x_j on e
    (a subgradient; Q_H is piecewise quadratic). X: (n, p)."""
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    V = _filled(verts)
    w = np.asarray(weights, dtype=float)
    Q = np.zeros(p)
    G = np.zeros(n * p)
    col = np.arange(p)[None, :]
    for s in range(0, V.shape[0], chunk):
        Vc = V[s:s + chunk]
        vals = X[Vc]
        amax, amin = vals.argmax(axis=1), vals.argmin(axis=1)
        rows = np.arange(Vc.shape[0])[:, None]
        d = vals[rows, amax, col] - vals[rows, amin, col]
        Q += w[s:s + chunk] @ (d * d)
        coef = 2.0 * w[s:s + chunk, None] * d
        G += np.bincount((Vc[rows, amax] * p + col).ravel(), coef.ravel(), minlength=n * p)
        G -= np.bincount((Vc[rows, amin] * p + col).ravel(), coef.ravel(), minlength=n * p)
    return Q, G.reshape(n, p)


def hyperedge_pairs(verts):
    """All vertex pairs of every hyperedge (the clique of e in the associated graph).

    Returns ``(U, V, valid)``, each (m, P) with P = r(r-1)/2 (columns in ``np.triu_indices(r, 1)`` order)."""
    A = np.asarray(verts, dtype=np.int64)
    i, j = np.triu_indices(A.shape[1], 1)
    U, V = A[:, i], A[:, j]
    return U, V, (U >= 0) & (V >= 0)


def pair_laplacian(u, v, z, n: int) -> np.ndarray:
    """Laplacian ``sum_k z_k (1_u - 1_v)(1_u - 1_v)^T`` of a weighted multigraph (pairs with z == 0 or u < 0
    ignored)."""
    u, v, z = (np.asarray(a).ravel() for a in (u, v, z))
    ok = (u >= 0) & (v >= 0) & (z != 0)
    A = np.bincount(u[ok] * n + v[ok], weights=z[ok], minlength=n * n).reshape(n, n)
    A = A + A.T
    return np.diag(A.sum(axis=1)) - A


def clique_laplacian(verts, weights, n: int, scale: str = "one") -> np.ndarray:
    """Clique-expansion Laplacian: every pair of e gets ``w_e`` (scale="one") or ``w_e / (|e| - 1)``
    (scale="cut": for |e| <= 3 its cut function equals the hypergraph cut function, spec 2.3)."""
    U, V, valid = hyperedge_pairs(verts)
    w = np.asarray(weights, float)
    if scale == "one":
        c = np.ones_like(w)
    elif scale == "cut":
        c = 1.0 / np.maximum((np.asarray(verts) >= 0).sum(axis=1) - 1, 1)
    else:
        raise ValueError(scale)
    Z = np.where(valid, (w * c)[:, None], 0.0)
    return pair_laplacian(U, V, Z, n)


def _reg_inverse(L: np.ndarray, reg: float) -> np.ndarray:
    """(L + lambda I + mu J/n)^{-1}, lambda = reg * max(1, tr(L)/n), mu = max(1, tr(L)/n). The J/n term only
    moves the all-ones direction (orthogonal to every 1_u - 1_v), so resistances equal those of
    (L + lambda I)^{-1}; it keeps that direction from blowing up to 1/lambda (cancellation error)."""
    n = L.shape[0]
    scale = max(1.0, float(np.trace(L)) / n)
    K = np.linalg.inv(L + reg * scale * np.eye(n) + scale / n)
    return 0.5 * (K + K.T)


def effective_resistances(L: np.ndarray, reg: float = 1e-9) -> np.ndarray:
    """All-pairs effective resistances ``R_uv = (1_u - 1_v)^T K (1_u - 1_v)``, K = (L + lambda I)^{-1},
    lambda = reg * max(1, tr(L)/n) (== pinv on a connected graph up to O(reg); pairs in different
    components get ~1/lambda, i.e. "infinite")."""
    K = _reg_inverse(L, reg)
    d = np.diag(K)
    return d[:, None] + d[None, :] - 2.0 * K


def space_bits(sizes, n: int) -> int:
    """Stored bits ``sum_e (|e| ceil(log2 n) + 64)`` (vertex ids + one 64-bit weight), spec 2.3."""
    b = max(1, math.ceil(math.log2(max(n, 2))))
    s = np.asarray(sizes, dtype=np.int64)
    return int(s.sum() * b + WORD_BITS * s.size)


def rho_from_eps(eps: float, n: int, C: float = 1.0) -> float:
    """Oversampling ``rho = C eps^-2 ln n`` (offline IS rate; C is the knob the spec asks to expose)."""
    return float(C) * math.log(n) / float(eps) ** 2


def merge_block_size(rho_reduce: float, n: int) -> int:
    """Merge-and-reduce block size B: the nominal size of one reduced sparsifier, ``ceil(rho_reduce (n - 1))``.

    Merge-and-reduce (Bentley-Saxe; coreset streaming) buffers as many items as one reduced summary holds, so
    that a reduction halves a merged pair. The offline sampler keeps ``sum_e min(1, rho s_e)`` hyperedges in
    expectation, and the importances sum to ``n - 1`` (leverage scores of a connected graph; between n - 1 and
    gamma (n - 1) for a balanced hypergraph), hence B = rho_reduce (n - 1): a rule, not a tuned value."""
    return int(math.ceil(float(rho_reduce) * (int(n) - 1)))


def growth_ratio(stored_small: float, stored_large: float) -> float:
    """stored(m_large) / stored(m_small) (C2)."""
    return float(stored_large) / float(stored_small) if stored_small > 0 else float("nan")
