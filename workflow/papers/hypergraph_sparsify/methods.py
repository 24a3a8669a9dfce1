"""Core algorithms for the ``hypergraph_sparsify`` reproduction.

Cohen-Addad, Woodruff, Xie, Zhou, "Nearly space-optimal graph and hypergraph sparsification in
insertion-only streams" (arXiv 2510.18180, ICLR 2026). Official code: not released. Written from the
spec ``shared/papers/hypergraph_sparsify.md`` (sections 2.2-2.7). Pure functions, no file I/O, no
printing; every random choice comes from ``np.random.default_rng(seed)`` (``seed`` may also be a
``np.random.Generator``). Run numpy with one thread (``OMP_NUM_THREADS=1``).

Representation
--------------
A hypergraph ``H`` is a dict of arrays (npz-friendly), hyperedges in **stream (arrival) order**:
``verts`` (m, r) int64 padded with -1 at the end of each row, ``sizes`` (m,), ``weights`` (m,),
``n`` (int), and for planted instances ``community`` (n,), ``side`` (n,) (planted bisection),
``is_bridge`` (m,). A (re)weighted sub-hypergraph / sparsifier is ``(idx, weight)``: indices into the
stream plus new weights (every algorithm here stores original hyperedges with new weights).

Energy (the quantity a spectral sparsifier preserves, spec 2.2)::

    Q_H(x) = sum_e w_e max_{u,v in e} (x_u - x_v)^2 = sum_e w_e (max_{u in e} x_u - min_{u in e} x_u)^2

API (and the spec claim each piece serves)
------------------------------------------
Data (DAG step ``gen_stream``)
  * ``planted_hypergraph_stream(n, m, r, seed, ...) -> H``  -- spec 2.3 generator (instances G/H3/H5).
  * ``coalesce(verts, weights) -> (verts, weights)`` merges parallel hyperedges (exact for Q_H).
Core maths (all claims)
  * ``hyper_energy(verts, weights, X)``, ``hyper_energy_grad(...)``, ``hyperedge_pairs``,
    ``pair_laplacian``, ``clique_laplacian``, ``effective_resistances``.
  * ``balance_weights(verts, weights, n, gamma, max_rounds)`` -- global greedy shifting (offline
    balanced weight assignment z, importance ``s_e = w_e max_{uv in e} R_uv(G_z)``).
  * ``local_balance(K_ee, w, gamma)`` -- balancing inside one hyperedge's clique (Kapralov et al. shift).
Methods (DAG step ``sparsify``; each returns a dict of plain numbers + arrays, see ``run_method``)
  * ``store-all``                         -- exact baseline (C2 ratio 8 for 8x m).
  * ``uniform_reservoir(m, budget, seed)``   -- ``uniform`` baseline at equal memory (C3).
  * ``offline_importance_sample(...)``    -- ``offline-is`` (offline JLS/Lee-style sampler; reducer).
  * ``online_sparsify(..., prefix=...)``  -- ``online-exact`` / ``online-sketch`` (Alg. 1-2; C1, C2).
  * ``stream_sparsify(..., pre_thin=...)``-- ``stream`` (online pre-thinning + merge-and-reduce; C1, C2,
    C3, C4) and its baseline ``mr-only`` (merge-and-reduce without pre-thinning).
  * ``sliding_window_sparsify(...)``      -- ``sliding`` (reverse-online sampling; C5).
  * ``run_method(method, H, seed, **params)`` dispatcher over ``METHODS``; ``run_sliding(H, ...)``.
Metrics (DAG step ``evaluate``)
  * ``make_test_family(H, seed)`` -- test vectors X (Gaussian, singletons, communities, unions, low
    eigenvectors, planted bisection).
  * ``reference_stats(H, X)`` + ``evaluate_sparsifier(H, idx, weight, X, ref=...)`` -> eps_hat
    (family + projected-gradient ascent; a LOWER bound on the true hypergraph eps), eps_exact for graphs
    (generalized eigenvalues), bisection error, min-cut ratio (r <= 3 via networkx.stoer_wagner).
  * ``graph_spectral_eps``, ``min_cut_value``, ``brute_force_min_cut``, ``evaluate_sliding``,
    ``space_bits``, ``growth_ratio``.

Deviations / interpretation choices (also in the report): all sampling rates are given as an
oversampling ``rho`` (``p_e = min(1, rho * importance_e)``, spec's C eps^-2 log n folded in, helper
``rho_from_eps``); the online prefix inverse is ``(L + lambda I + mu J/n)^{-1}``,
``lambda = reg * max(1, trace(L)/n)`` (spec: 1e-6 trace/n), kept by Woodbury updates and recomputed
exactly every ``refresh`` updates; the sliding window recomputes the reverse-online probabilities in batches
(``recompute_every`` arrivals) rather than after every arrival.

Parameters measured to fit the spec's claims at n = 40 (2-core pilot runs): online rho = 20 (rho_sketch = 8);
stream rho = 20, rho_reduce = 60; mr-only rho_reduce = 60; merge-and-reduce block B = ceil(rho_reduce (n - 1))
(``merge_block_size``, a rule; it was a tuned 2500 before); offline-is rho = 20;
uniform budget = stream's ``peak_stored`` (median of 5 reservoir seeds); sliding window = 8000,
rho = 30, recompute_every = 1000 on m = 32000. Smoke: n = 30, rho = 10, rho_reduce = 30.
"""

from __future__ import annotations

import math
import time

import networkx as nx
import numpy as np

__all__ = [
    "METHODS", "KIND_NAMES", "planted_hypergraph_stream", "coalesce", "hyperedge_pairs", "pair_laplacian",
    "clique_laplacian", "effective_resistances", "hyper_energy", "hyper_energy_grad", "space_bits",
    "rho_from_eps", "balance_weights", "local_balance", "offline_importance_sample", "uniform_reservoir",
    "online_sparsify", "stream_sparsify", "sliding_window_sparsify", "run_method", "run_sliding",
    "make_test_family", "reference_stats", "evaluate_sparsifier", "evaluate_sliding", "graph_spectral_eps",
    "min_cut_value", "brute_force_min_cut", "growth_ratio", "subhypergraph", "merge_block_size",
    "shuffled_importance_sample",
]

# Appended names only: a method's position seeds its random numbers (sparsify_eval.RUN_NAMES, instances.rng_for).
METHODS = ("store-all", "uniform", "offline-is", "online-exact", "online-sketch", "stream", "mr-only",
           "online-shuffled")
KIND_NAMES = ("gauss", "singleton", "community", "union", "eigvec", "bisection")
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


# ----------------------------------------------------------------------------------------------------
# weight assignment (balancing)
# ----------------------------------------------------------------------------------------------------

def balance_weights(verts, weights, n: int, gamma: float = 2.0, max_rounds: int = 30, reg: float = 1e-9) -> dict:
    """Offline balanced weight assignment by global greedy shifting (spec 2.3 ``offline_IS``).

    Each hyperedge e spreads ``w_e`` over its clique pairs, ``sum_{uv in e} z_{e,uv} = w_e`` (start: uniform).
    G_z = associated graph with pair weights ``sum_e z_{e,uv}``; R = its effective resistances. e is
    gamma-balanced when ``min_{uv: z_{e,uv}>0} R_uv >= max_{uv in e} R_uv / gamma``. Each round, every
    unbalanced e moves ``lambda_e = min{z_{e,a}, (gamma-1) / (2 gamma R_b c_b)}`` from its lowest-R positive
    pair a to its highest-R pair b (Kapralov et al. 2021 step; ``c_b`` = number of hyperedges shifting into
    pair b this round, so that the total leverage added to a pair is <= (gamma-1)/(2 gamma)).

    Importance ``s_e = w_e max_{uv in e} R_uv(G_z)``. For ANY z this bounds the hyperedge's share of energy,
    ``w_e max_{uv in e}(x_u-x_v)^2 <= s_e x^T L_{G_z} x <= s_e Q_H(x)``; balancing only keeps ``sum_e s_e``
    small (~ gamma (n - 1)).

    Returns dict(z (m, P), importance (m,), rounds, frac_unbalanced, R (n, n)).
    """
    w = np.asarray(weights, dtype=float)
    U, V, valid = hyperedge_pairs(verts)
    m, P = U.shape
    z = np.where(valid, (w / np.maximum(valid.sum(axis=1), 1))[:, None], 0.0)
    rows = np.arange(m)
    frac = 0.0
    rounds = 0
    Uc, Vc = np.where(valid, U, 0), np.where(valid, V, 0)
    while True:
        R = effective_resistances(pair_laplacian(U, V, z, n), reg)
        Rp = np.where(valid, R[Uc, Vc], -np.inf)
        b = Rp.argmax(axis=1)
        Rb = Rp[rows, b]
        Rpos = np.where(z > 1e-12 * w[:, None], Rp, np.inf)
        a = Rpos.argmin(axis=1)
        viol = Rpos[rows, a] < Rb / gamma
        frac = float(viol.mean()) if m else 0.0
        if rounds >= max_rounds or not viol.any():
            break
        rounds += 1
        e = np.flatnonzero(viol)
        key = np.minimum(U[e, b[e]], V[e, b[e]]) * n + np.maximum(U[e, b[e]], V[e, b[e]])
        _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        lam = np.minimum(z[e, a[e]], (gamma - 1.0) / (2.0 * gamma * Rb[e] * cnt[inv.ravel()]))
        z[e, a[e]] -= lam
        z[e, b[e]] += lam
    imp = w * np.where(valid, Rp, -np.inf).max(axis=1) if m else np.zeros(0)
    return {"z": z, "importance": imp, "rounds": rounds, "frac_unbalanced": frac, "R": R}


_SMALL = {}


def _small(s: int):
    """Cached pair incidence of a clique on s vertices: (I, J, B (P, s))."""
    if s not in _SMALL:
        i, j = np.triu_indices(s, 1)
        B = np.zeros((i.size, s))
        B[np.arange(i.size), i] = 1.0
        B[np.arange(i.size), j] = -1.0
        _SMALL[s] = (i, j, B)
    return _SMALL[s]


def _post_inverse(Kee: np.ndarray, Lz: np.ndarray) -> np.ndarray:
    """(K^{-1} + L_z)^{-1} restricted to e, by Woodbury: K_ee - K_ee L_z (I + K_ee L_z)^{-1} K_ee."""
    s = Kee.shape[0]
    return Kee - Kee @ Lz @ np.linalg.solve(np.eye(s) + Kee @ Lz, Kee)


def local_balance(Kee, w: float, gamma: float = 2.0, self_in_prefix: bool = True, max_iter: int = 50):
    """Balancing of one arriving hyperedge inside its own clique (paper Alg. 1 local weight assignment).

    ``Kee`` = (L_prefix + lambda I)^{-1} restricted to e's s vertices. Start z uniform (sum z = w), then
    repeatedly move ``lambda = min{z_a, (gamma-1)/(2 gamma R_b)}`` from the positive pair a of lowest R to the
    pair b of highest R until ``min_{z>0} R >= max R / gamma``. With ``self_in_prefix`` R is measured in
    prefix + e's own clique (``R = diag(B (K^{-1} + B^T Z B)^{-1} B^T)``, the paper's Z_t^{1/2} A_t includes
    the arrival), else in the prefix only (then R is fixed and the loop reduces to moving all weight of
    pairs with R < max R / gamma onto argmax R).

    Returns ``(z (P,), R (P,))`` with pairs in ``np.triu_indices(s, 1)`` order."""
    Kee = np.asarray(Kee, dtype=float)
    s = Kee.shape[0]
    i, j, B = _small(s)
    Rpre = Kee[i, i] + Kee[j, j] - 2.0 * Kee[i, j]
    if s == 2:
        R = Rpre / (1.0 + w * Rpre) if self_in_prefix else Rpre
        return np.array([float(w)]), R
    P = i.size
    z = np.full(P, w / P)
    if not self_in_prefix:
        low = Rpre < Rpre.max() / gamma
        if low.any():
            b = int(Rpre.argmax())
            z[b] += z[low].sum()
            z[low] = 0.0
        return z, Rpre
    R = Rpre
    for _ in range(max_iter + 1):
        Kp = _post_inverse(Kee, B.T @ (z[:, None] * B))
        R = Kp[i, i] + Kp[j, j] - 2.0 * Kp[i, j]
        pos = z > 1e-12 * w
        Rpos = np.where(pos, R, np.inf)
        a, b = int(Rpos.argmin()), int(R.argmax())
        if Rpos[a] >= R[b] / gamma:
            break
        lam = min(z[a], (gamma - 1.0) / (2.0 * gamma * R[b]))
        z[a] -= lam
        z[b] += lam
    return z, R


# ----------------------------------------------------------------------------------------------------
# samplers
# ----------------------------------------------------------------------------------------------------

def offline_importance_sample(verts, weights, n: int, rho: float, seed=0, gamma: float = 2.0,
                              max_rounds: int = 30) -> dict:
    """``offline-is``: balanced weights on the whole input, ``p_e = min(1, rho * w_e max_{uv in e} R_uv)``
    (spec: rho = C eps^-2 log n), keep e independently with prob p_e and weight ``w_e / p_e``
    (unbiased: E[L_hat] = L, E[Q_hat(x)] = Q(x)).

    Returns dict(idx, weight, p (m,), importance (m,), rounds, frac_unbalanced)."""
    rng = _rng(seed)
    w = np.asarray(weights, dtype=float)
    bal = balance_weights(verts, w, n, gamma=gamma, max_rounds=max_rounds)
    p = np.minimum(1.0, rho * bal["importance"])
    keep = rng.random(w.size) < p
    idx = np.flatnonzero(keep)
    return {"idx": idx, "weight": w[idx] / p[idx], "p": p, "importance": bal["importance"],
            "rounds": bal["rounds"], "frac_unbalanced": bal["frac_unbalanced"]}


def uniform_reservoir(m: int, budget: int, seed=0):
    """Reservoir sample (Algorithm R) of ``budget`` stream positions out of m; returns sorted idx.
    The ``uniform`` baseline reweights every kept hyperedge by ``m / budget``."""
    rng = _rng(seed)
    k = int(min(budget, m))
    res = np.arange(k)
    if k == 0:
        return res
    t = np.arange(k, m)
    jj = np.floor(rng.random(t.size) * (t + 1)).astype(np.int64)
    for tt, j in zip(t[jj < k], jj[jj < k]):
        res[j] = tt
    return np.sort(res)


class _Prefix:
    """(L + lambda I)^{-1} of a growing weighted graph (see ``_reg_inverse``), kept by rank-|e| Woodbury
    updates and recomputed exactly every ``refresh`` updates or on demand (``refresh_now``)."""

    def __init__(self, n: int, reg: float, refresh: int):
        self.n, self.reg, self.refresh = n, reg, refresh
        self.L = np.zeros((n, n))
        self.K = _reg_inverse(self.L, reg)
        self.updates = 0

    def sub(self, e):
        return self.K[e[:, None], e]

    def add(self, e, Lz):
        e = np.asarray(e)
        self.L[e[:, None], e] += Lz
        Ue = self.K[:, e]
        Kee = Ue[e]
        M = Lz @ np.linalg.inv(np.eye(e.size) + Kee @ Lz)
        self.K -= Ue @ M @ Ue.T
        self.updates += 1
        if self.updates % self.refresh == 0:
            self.K = _reg_inverse(self.L, self.reg)

    def refresh_now(self):
        self.K = _reg_inverse(self.L, self.reg)

    def rebuild(self, L):
        self.L = np.array(L, dtype=float)
        self.K = _reg_inverse(self.L, self.reg)


def _balance_in(pre: "_Prefix", e, w: float, gamma: float, self_in_prefix: bool):
    """local_balance against the prefix; if round-off made a resistance non-positive, recompute K exactly."""
    z, R = local_balance(pre.sub(e), w, gamma, self_in_prefix)
    if not np.all(R > 0):
        pre.refresh_now()
        z, R = local_balance(pre.sub(e), w, gamma, self_in_prefix)
    return z, R


def _clique_L(s: int, z) -> np.ndarray:
    _, _, B = _small(s)
    return B.T @ (np.asarray(z)[:, None] * B)


def online_sparsify(verts, weights, n: int, rho: float, seed=0, prefix: str = "exact", gamma: float = 2.0,
                    rho_sketch: float = 8.0, self_in_prefix: bool = True, reg: float = 1e-6,
                    refresh: int = 256, log_every: int = 1000) -> dict:
    """Online hypergraph sparsification (paper Alg. 1-2, spec 2.3 ``online``).

    For each arriving e (in stream order): local balancing of w_e over e's clique w.r.t. the prefix
    inverse K (``local_balance``), importance ``s_e = w_e max_{uv in e} R_uv``, keep with
    ``p_e = min(1, rho s_e)`` and weight ``w_e / p_e``. Prefix kinds:

    * ``"exact"``  (``online-exact``): K of every clique seen so far (the analysis object);
    * ``"sketch"`` (``online-sketch``): K of an independent online row sample of clique edges -- each pair
      (u, v, z) of the balanced clique is kept with ``q = min(1, rho_sketch * z R_uv / (1 + z R_uv))``
      (online ridge leverage score) and added with weight z / q (decoupling lemma; ``sketch_rows`` stored);
    * ``"sample"``: K of the sparsifier output so far (kept cliques with weight z / p_e).

    Returns dict(idx, weight, p (m,), importance (m,), sketch_rows, log_t, log_stored, log_bits,
    log_sketch_rows). Deterministic given ``seed``.
    """
    if prefix not in ("exact", "sketch", "sample"):
        raise ValueError(prefix)
    rng = _rng(seed)
    A = np.asarray(verts, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    m = A.shape[0]
    sizes = (A >= 0).sum(axis=1)
    u_keep = rng.random(m)
    pre = _Prefix(n, reg, refresh)
    p = np.zeros(m)
    imp = np.zeros(m)
    keep = np.zeros(m, dtype=bool)
    bits_per = sizes * max(1, math.ceil(math.log2(max(n, 2)))) + WORD_BITS
    sketch_rows = 0
    stored = 0
    bits = 0
    logs = ([], [], [], [])
    for t in range(m):
        s = sizes[t]
        e = A[t, :s]
        z, R = _balance_in(pre, e, w[t], gamma, self_in_prefix)
        imp[t] = w[t] * R.max()
        p[t] = min(1.0, rho * imp[t])
        if u_keep[t] < p[t]:
            keep[t] = True
            stored += 1
            bits += bits_per[t]
        if prefix == "exact":
            pre.add(e, _clique_L(s, z))
        elif prefix == "sample":
            if keep[t]:
                pre.add(e, _clique_L(s, z / p[t]))
        else:
            i, j, _ = _small(s)
            Kee = pre.sub(e)
            Rpre = Kee[i, i] + Kee[j, j] - 2.0 * Kee[i, j]
            q = np.minimum(1.0, rho_sketch * z * Rpre / (1.0 + z * Rpre))
            take = (rng.random(z.size) < q) & (z > 0)
            if take.any():
                zz = np.where(take, z / np.where(take, q, 1.0), 0.0)
                pre.add(e, _clique_L(s, zz))
                sketch_rows += int(take.sum())
        if (t + 1) % log_every == 0 or t + 1 == m:
            for lst, val in zip(logs, (t + 1, stored, bits, sketch_rows)):
                lst.append(val)
    idx = np.flatnonzero(keep)
    return {"idx": idx, "weight": w[idx] / p[idx], "p": p, "importance": imp, "sketch_rows": sketch_rows,
            "log_t": np.array(logs[0]), "log_stored": np.array(logs[1]), "log_bits": np.array(logs[2]),
            "log_sketch_rows": np.array(logs[3])}


def stream_sparsify(verts, weights, n: int, rho: float = 20.0, rho_reduce: float = 60.0, block: int | None = None,
                    seed=0, pre_thin: bool = True, gamma: float = 2.0, max_rounds: int = 30, reg: float = 1e-6,
                    self_in_prefix: bool = True, log_every: int = 1000) -> dict:
    """Streaming sparsifier (claim 1): online pre-thinning followed by merge-and-reduce (spec 2.3 ``stream``).

    Pre-thinning (``pre_thin=True``): arriving e is kept with ``p_e = min(1, rho w_e max_{uv in e} R_uv)``
    where R is measured in the sparsifier held in memory so far (union of merge-and-reduce levels + buffer,
    each kept clique with weight z / p; ridge leverage scores ``a^T (A_hat^T A_hat + lambda I)^{-1} a``);
    kept hyperedges enter the buffer with weight ``w_e / p_e``. Merge-and-reduce (binary counter): when the
    buffer holds ``block`` hyperedges it is reduced by ``offline_importance_sample`` (rate ``rho_reduce``,
    the spec's eps' = eps / (2 levels) folded into it) to level 0; two sets on level l are merged (union) and
    reduced to level l+1. Output = union of all levels + the (unreduced) buffer. ``pre_thin=False`` gives
    the ``mr-only`` baseline (every arrival enters the buffer with its own weight). ``block=None``: B from
    ``merge_block_size`` (the size of one reduced sparsifier).

    Returns dict(idx, weight, peak_stored, peak_bits, block, levels (number of occupied levels at the end),
    max_level, reductions, thinned (hyperedges that passed the pre-thinning), log_t, log_stored, log_bits).
    """
    rng = _rng(seed)
    block = merge_block_size(rho_reduce, n) if block is None else int(block)
    A = np.asarray(verts, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    m = A.shape[0]
    sizes = (A >= 0).sum(axis=1)
    bits_per = sizes * max(1, math.ceil(math.log2(max(n, 2)))) + WORD_BITS
    U, V, valid = hyperedge_pairs(A)
    u_keep = rng.random(m)
    zn = np.zeros(U.shape, dtype=float)  # balanced z / w_e of thinned-in hyperedges
    levels: list = []
    buf_i: list = []
    buf_w: list = []
    pre = _Prefix(n, reg, refresh=256) if pre_thin else None
    reductions = 0
    thinned = 0
    max_level = -1
    logs = ([], [], [])
    peak_stored = peak_bits = 0
    lvl_cnt = lvl_bits = buf_bits = 0

    def _reduce(idx, wt):
        nonlocal reductions
        reductions += 1
        out = offline_importance_sample(A[idx], wt, n, rho_reduce, rng, gamma, max_rounds)
        return idx[out["idx"]], out["weight"]

    def _memory():
        parts_i = [lv[0] for lv in levels if lv is not None] + [np.asarray(buf_i, dtype=np.int64)]
        parts_w = [lv[1] for lv in levels if lv is not None] + [np.asarray(buf_w, dtype=float)]
        return np.concatenate(parts_i), np.concatenate(parts_w)

    for t in range(m):
        if pre_thin:
            s = sizes[t]
            e = A[t, :s]
            z, R = _balance_in(pre, e, w[t], gamma, self_in_prefix)
            pt = min(1.0, rho * w[t] * R.max())
            if u_keep[t] < pt:
                zn[t, :z.size] = z / w[t]
                thinned += 1
                buf_i.append(t)
                buf_w.append(w[t] / pt)
                buf_bits += int(bits_per[t])
                pre.add(e, _clique_L(s, z / pt))
        else:
            buf_i.append(t)
            buf_w.append(w[t])
            buf_bits += int(bits_per[t])
        peak_stored = max(peak_stored, lvl_cnt + len(buf_i))  # measured before a reduction (full buffer)
        peak_bits = max(peak_bits, lvl_bits + buf_bits)
        if len(buf_i) >= block:
            ci, cw = _reduce(np.asarray(buf_i, dtype=np.int64), np.asarray(buf_w))
            buf_i, buf_w, buf_bits = [], [], 0
            lvl = 0
            while lvl < len(levels) and levels[lvl] is not None:
                oi, ow = levels[lvl]
                levels[lvl] = None
                ci, cw = _reduce(np.concatenate([oi, ci]), np.concatenate([ow, cw]))
                lvl += 1
            if lvl == len(levels):
                levels.append(None)
            levels[lvl] = (ci, cw)
            max_level = max(max_level, lvl)
            lvl_cnt = sum(lv[0].size for lv in levels if lv is not None)
            lvl_bits = sum(int(bits_per[lv[0]].sum()) for lv in levels if lv is not None)
            if pre_thin:
                mi, mw = _memory()
                pre.rebuild(pair_laplacian(U[mi], V[mi], zn[mi] * mw[:, None], n))
        if (t + 1) % log_every == 0 or t + 1 == m:
            for lst, val in zip(logs, (t + 1, lvl_cnt + len(buf_i), lvl_bits + buf_bits)):
                lst.append(val)
    mi, mw = _memory()
    order = np.argsort(mi, kind="stable")
    return {"idx": mi[order], "weight": mw[order], "peak_stored": int(peak_stored), "peak_bits": int(peak_bits),
            "block": block, "levels": int(sum(lv is not None for lv in levels)), "max_level": int(max_level),
            "reductions": int(reductions), "thinned": int(thinned if pre_thin else m), "log_t": np.array(logs[0]),
            "log_stored": np.array(logs[1]), "log_bits": np.array(logs[2])}


def shuffled_importance_sample(p, weights, seed=0, log_every: int = 1000) -> dict:
    """Negative control of importance sampling: the sampler's own probabilities p, randomly permuted over the
    hyperedges. Same multiset of probabilities (so the same expected memory, sum p), but a hyperedge's
    probability no longer reflects its importance; kept e gets weight ``w_e / q_e`` (still unbiased).

    Returns dict(idx, weight, q (m,), log_t, log_stored)."""
    rng = _rng(seed)
    p = np.asarray(p, dtype=float)
    w = np.asarray(weights, dtype=float)
    q = rng.permutation(p)
    keep = rng.random(p.size) < q
    idx = np.flatnonzero(keep)
    log_t = np.unique(np.r_[np.arange(log_every, p.size + 1, log_every), p.size])
    return {"idx": idx, "weight": w[idx] / q[idx], "q": q, "log_t": log_t,
            "log_stored": np.cumsum(keep)[log_t - 1] if p.size else np.zeros(0, np.int64)}


def sliding_window_sparsify(verts, weights, n: int, window: int, rho: float = 20.0, seed=0, query_times=None,
                            recompute_every: int | None = None, gamma: float = 2.0, reg: float = 1e-6,
                            self_in_prefix: bool = True) -> dict:
    """Sliding-window sparsifier by reverse-online sampling (claim 3, spec 2.3 ``sliding``).

    The window at time T (T arrivals seen) is stream positions ``[T - window, T)``. A new arrival is stored
    with ``p = 1``. Every ``recompute_every`` arrivals (and at each query time) one reverse pass runs over
    the stored hyperedges from newest to oldest: e's importance ``s_e = w_e max_{uv in e} R_uv`` is measured
    (after local balancing) in the stored sample of NEWER hyperedges (cliques weighted z / p) plus e itself;
    ``p_new = min(p_old, min(1, rho s_e))``; e survives with prob ``p_new / p_old`` (so overall it is kept
    with prob p_new, weight ``w_e / p_new``). Hyperedges older than the window are dropped.

    ``query_times``: arrival counts T at which the stored sample is snapshotted (default: 10 evenly spaced
    in [window, m]). Returns dict(query_times, snap_ptr (Q+1,), snap_idx, snap_weight (concatenated
    snapshots; snapshot q = [ptr[q], ptr[q+1]) ), snap_stored (Q,), peak_stored, log_t, log_stored).
    """
    rng = _rng(seed)
    A = np.asarray(verts, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    m = A.shape[0]
    window = int(window)
    sizes = (A >= 0).sum(axis=1)
    if query_times is None:
        query_times = np.unique(np.linspace(min(window, m), m, 10).round().astype(np.int64))
    query_times = np.asarray(query_times, dtype=np.int64)
    qset = set(int(q) for q in query_times)
    if recompute_every is None:
        recompute_every = max(1, window // 8)
    st_i: list = []  # stored stream positions (ascending)
    st_p: list = []
    snaps_i, snaps_w, snap_stored = [], [], []
    peak = 0
    log_t, log_s = [], []

    def _reverse_pass(st_i, st_p):
        pre = _Prefix(n, reg, refresh=256)
        keep_i, keep_p = [], []
        for pos in range(len(st_i) - 1, -1, -1):
            t, p_old = st_i[pos], st_p[pos]
            s = sizes[t]
            e = A[t, :s]
            z, R = _balance_in(pre, e, w[t], gamma, self_in_prefix)
            p_new = min(p_old, 1.0, rho * w[t] * R.max())
            if rng.random() < p_new / p_old:
                keep_i.append(t)
                keep_p.append(p_new)
                pre.add(e, _clique_L(s, z / p_new))
        return keep_i[::-1], keep_p[::-1]

    for t in range(m):
        st_i.append(t)
        st_p.append(1.0)
        T = t + 1
        while st_i and st_i[0] < T - window:
            st_i.pop(0)
            st_p.pop(0)
        peak = max(peak, len(st_i))
        if T % recompute_every == 0 or T in qset:
            st_i, st_p = _reverse_pass(st_i, st_p)
            log_t.append(T)
            log_s.append(len(st_i))
        if T in qset:
            ii = np.asarray(st_i, dtype=np.int64)
            snaps_i.append(ii)
            snaps_w.append(w[ii] / np.asarray(st_p))
            snap_stored.append(ii.size)
    ptr = np.concatenate([[0], np.cumsum([s.size for s in snaps_i])]).astype(np.int64)
    return {"query_times": query_times, "snap_ptr": ptr,
            "snap_idx": np.concatenate(snaps_i) if snaps_i else np.zeros(0, np.int64),
            "snap_weight": np.concatenate(snaps_w) if snaps_w else np.zeros(0),
            "snap_stored": np.asarray(snap_stored, dtype=np.int64), "peak_stored": int(peak),
            "window": window, "log_t": np.asarray(log_t), "log_stored": np.asarray(log_s)}


# ----------------------------------------------------------------------------------------------------
# dispatcher
# ----------------------------------------------------------------------------------------------------

_PARAMS = {
    "store-all": (),
    "uniform": ("budget",),
    "offline-is": ("rho", "gamma", "max_rounds"),
    "online-exact": ("rho", "gamma", "self_in_prefix", "reg", "refresh"),
    "online-sketch": ("rho", "gamma", "self_in_prefix", "reg", "refresh", "rho_sketch"),
    "stream": ("rho", "rho_reduce", "block", "gamma", "max_rounds", "reg", "self_in_prefix"),
    "mr-only": ("rho_reduce", "block", "gamma", "max_rounds"),
    "online-shuffled": ("rho", "gamma", "self_in_prefix", "reg", "refresh"),
}


def run_method(method: str, H: dict, seed=0, **params) -> dict:
    """One run of ``method`` (in ``METHODS``) on stream ``H``.

    Params: store-all: -; uniform: budget (int, required: the memory to match); offline-is: rho; online-exact:
    rho; online-sketch: rho, rho_sketch; stream: rho, rho_reduce (block: default ``merge_block_size``); mr-only:
    rho_reduce (block); online-shuffled (control): online-exact's params (+ the optional knobs of the
    underlying functions, see ``_PARAMS``).

    Returns dict(method, n, m, r, idx, weight, stored, frac_stored, bits, bits_frac, peak_stored, peak_bits,
    sketch_rows, sketch_bits, bits_total, bridges_kept, time_s, log_t, log_stored) plus method extras:
    offline-is: mean_p, sum_importance, rounds, frac_unbalanced; online-*: mean_p, sum_importance;
    stream / mr-only: levels, max_level, reductions, thinned. ``stored``/``bits`` = the output sparsifier;
    ``peak_stored``/``peak_bits`` = most hyperedges held at any time (merge-and-reduce buffer + levels; equal
    to stored for the other methods); ``sketch_*`` = clique-edge rows of online-sketch's prefix sketch.
    """
    if method not in _PARAMS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    bad = set(params) - set(_PARAMS[method])
    if bad:
        raise ValueError(f"{method}: unknown params {sorted(bad)}")
    A = np.asarray(H["verts"], dtype=np.int64)
    w = np.asarray(H["weights"], dtype=float)
    n, m = int(H["n"]), A.shape[0]
    sizes = (A >= 0).sum(axis=1)
    extra: dict = {}
    t0 = time.perf_counter()
    if method == "store-all":
        idx, wt = np.arange(m), w.copy()
        step = 1000
        lt = np.unique(np.r_[np.arange(step, m + 1, step), m])
        ls = lt.copy()
    elif method == "uniform":
        budget = int(params["budget"])
        idx = uniform_reservoir(m, budget, seed)
        wt = w[idx] * (m / max(idx.size, 1))
        step = 1000
        lt = np.unique(np.r_[np.arange(step, m + 1, step), m])
        ls = np.minimum(lt, budget)
    elif method == "offline-is":
        out = offline_importance_sample(A, w, n, seed=seed, **params)
        idx, wt = out["idx"], out["weight"]
        extra = {"mean_p": float(out["p"].mean()), "sum_importance": float(out["importance"].sum()),
                 "rounds": out["rounds"], "frac_unbalanced": out["frac_unbalanced"]}
        lt, ls = np.array([m]), np.array([idx.size])
    elif method in ("online-exact", "online-sketch"):
        out = online_sparsify(A, w, n, seed=seed, prefix=method.split("-")[1], **params)
        idx, wt = out["idx"], out["weight"]
        extra = {"mean_p": float(out["p"].mean()), "sum_importance": float(out["importance"].sum()),
                 "sketch_rows": int(out["sketch_rows"])}
        lt, ls = out["log_t"], out["log_stored"]
    elif method == "online-shuffled":  # control: online-exact's probabilities, permuted over the hyperedges
        out = online_sparsify(A, w, n, seed=seed, prefix="exact", **params)
        sh = shuffled_importance_sample(out["p"], w, seed)
        idx, wt = sh["idx"], sh["weight"]
        extra = {"mean_p": float(sh["q"].mean())}
        lt, ls = sh["log_t"], sh["log_stored"]
    else:
        out = stream_sparsify(A, w, n, seed=seed, pre_thin=(method == "stream"), **params)
        idx, wt = out["idx"], out["weight"]
        extra = {k: out[k] for k in ("peak_stored", "peak_bits", "block", "levels", "max_level", "reductions",
                                     "thinned")}
        lt, ls = out["log_t"], out["log_stored"]
    elapsed = time.perf_counter() - t0
    bits = space_bits(sizes[idx], n)
    sketch_rows = int(extra.get("sketch_rows", 0))
    sketch_bits = sketch_rows * (2 * max(1, math.ceil(math.log2(max(n, 2)))) + WORD_BITS)
    res = {"method": method, "n": n, "m": m, "r": int(sizes.max()) if m else 0, "idx": np.asarray(idx, np.int64),
           "weight": np.asarray(wt, float), "stored": int(idx.size), "frac_stored": idx.size / max(m, 1),
           "bits": bits, "bits_frac": bits / max(space_bits(sizes, n), 1),
           "peak_stored": int(extra.pop("peak_stored", idx.size)),
           "peak_bits": int(extra.pop("peak_bits", bits)), "sketch_rows": sketch_rows,
           "sketch_bits": int(sketch_bits), "bits_total": int(bits + sketch_bits),
           "bridges_kept": int(np.asarray(H["is_bridge"])[idx].sum()) if "is_bridge" in H else -1,
           "time_s": float(elapsed), "log_t": np.asarray(lt, np.int64), "log_stored": np.asarray(ls, np.int64)}
    extra.pop("sketch_rows", None)
    res.update(extra)
    return res


def run_sliding(H: dict, window: int, rho: float = 20.0, seed=0, n_queries: int = 10, **params) -> dict:
    """``sliding`` on stream H: ``sliding_window_sparsify`` with ``n_queries`` evenly spaced query times in
    [window, m]; adds time_s, max_stored_frac_window (max over queries of stored / window) and
    peak_stored_frac_window."""
    A = np.asarray(H["verts"], dtype=np.int64)
    m = A.shape[0]
    q = np.unique(np.linspace(min(window, m), m, n_queries).round().astype(np.int64))
    t0 = time.perf_counter()
    out = sliding_window_sparsify(A, H["weights"], int(H["n"]), window, rho, seed, query_times=q, **params)
    out["time_s"] = time.perf_counter() - t0
    out["max_stored_frac_window"] = float(out["snap_stored"].max() / window) if out["snap_stored"].size else 0.0
    out["peak_stored_frac_window"] = float(out["peak_stored"] / window)
    return out


# ----------------------------------------------------------------------------------------------------
# metrics
# ----------------------------------------------------------------------------------------------------

def make_test_family(H: dict, seed=0, n_gauss: int = 200, n_unions: int = 100, n_eig: int = 20,
                     flip: float = 0.1) -> dict:
    """Test vectors (spec 2.3 Metrics): ``n_gauss`` Gaussian x, the n singletons 1_v, the k community
    indicators, ``n_unions`` random unions of communities (a random non-empty proper subset of communities,
    then each vertex flipped with prob ``flip``; the spec does not say what is united), the ``n_eig`` lowest
    non-trivial eigenvectors of the clique-expansion Laplacian (pair weight w_e), and the planted bisection.

    Returns dict(X (n, p), kind (p,) int codes into ``KIND_NAMES``)."""
    rng = _rng(seed)
    n = int(H["n"])
    comm = np.asarray(H.get("community", np.zeros(n, np.int64)))
    k = int(comm.max()) + 1
    cols, kinds = [], []

    def put(M, kind):
        M = np.asarray(M, float).reshape(n, -1)
        cols.append(M)
        kinds.extend([KIND_NAMES.index(kind)] * M.shape[1])

    put(rng.standard_normal((n, n_gauss)), "gauss")
    put(np.eye(n), "singleton")
    if k >= 2:
        put((comm[:, None] == np.arange(k)[None, :]).astype(float), "community")
        U = np.zeros((n, n_unions))
        for j in range(n_unions):
            sub = rng.random(k) < 0.5
            while sub.all() or not sub.any():
                sub = rng.random(k) < 0.5
            x = sub[comm]
            x ^= rng.random(n) < flip
            U[:, j] = x
        put(U, "union")
    L = clique_laplacian(H["verts"], H["weights"], n)
    _, vecs = np.linalg.eigh(L)
    put(vecs[:, 1:1 + n_eig], "eigvec")
    if "side" in H:
        put(np.asarray(H["side"], float), "bisection")
    return {"X": np.concatenate(cols, axis=1), "kind": np.asarray(kinds, dtype=np.int64)}


def _is_graph(verts) -> bool:
    return int((np.asarray(verts) >= 0).sum(axis=1).max(initial=0)) <= 2


def graph_spectral_eps(L: np.ndarray, L_hat: np.ndarray, tol: float = 1e-9) -> float:
    """Exact graph eps: ``max(|lambda_max - 1|, |1 - lambda_min|)`` of ``L^{+1/2} L_hat L^{+1/2}`` on range(L)
    (plus 1 if L_hat has energy outside range(L))."""
    vals, vecs = np.linalg.eigh(L)
    keep = vals > tol * max(vals.max(), 1e-300)
    P = vecs[:, keep] / np.sqrt(vals[keep])
    lam = np.linalg.eigvalsh(P.T @ L_hat @ P)
    eps = max(abs(lam.max() - 1.0), abs(1.0 - lam.min()))
    N = vecs[:, ~keep]
    if N.size and np.abs(N.T @ L_hat @ N).max() > tol * max(np.abs(L_hat).max(), 1e-300):
        eps = max(eps, float("inf"))
    return float(eps)


def min_cut_value(verts, weights, n: int) -> float:
    """Exact global min cut of a hypergraph of rank <= 3: the cut function equals that of the clique
    expansion with pair weights w_e (|e| = 2) and w_e / 2 (|e| = 3) -> ``networkx.stoer_wagner``. A
    disconnected hypergraph (or isolated vertex) has min cut 0. Rank > 3: ``brute_force_min_cut`` when
    n <= 20, else NaN."""
    V = np.asarray(verts, dtype=np.int64)
    if V.shape[0] and (V >= 0).sum(axis=1).max() > 3:
        return brute_force_min_cut(V, weights, n) if n <= 20 else float("nan")
    U, W, valid = hyperedge_pairs(V)
    c = 1.0 / np.maximum((V >= 0).sum(axis=1) - 1, 1)
    Z = np.where(valid, (np.asarray(weights, float) * c)[:, None], 0.0)
    A = pair_laplacian(U, W, Z, n)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    iu, ju = np.nonzero(np.triu(-A, 1) > 0)
    G.add_weighted_edges_from((int(a), int(b), float(-A[a, b])) for a, b in zip(iu, ju))
    if n < 2 or not nx.is_connected(G):
        return 0.0
    val, _ = nx.stoer_wagner(G)
    return float(val)


def brute_force_min_cut(verts, weights, n: int) -> float:
    """Min over all 2^(n-1)-1 proper vertex subsets S (vertex n-1 outside) of the hypergraph cut
    ``sum_{e cut by S} w_e`` (= Q_H(1_S)). For tests / tiny n only."""
    if n > 22:
        raise ValueError("brute force only for n <= 22")
    codes = np.arange(1, 2 ** (n - 1))
    S = ((codes[None, :] >> np.arange(n - 1)[:, None]) & 1).astype(float)
    S = np.vstack([S, np.zeros((1, codes.size))])
    best = np.inf
    for s in range(0, codes.size, 4096):
        best = min(best, float(hyper_energy(verts, weights, S[:, s:s + 4096]).min()))
    return best


def reference_stats(H: dict, X=None) -> dict:
    """Everything about the full H that evaluation reuses: coalesced H, Q_H on X, graph Laplacian
    (rank 2), exact min cut (rank <= 3)."""
    Vc, wc = coalesce(H["verts"], H["weights"])
    n = int(H["n"])
    ref = {"verts": Vc, "weights": wc, "n": n, "graph": _is_graph(Vc)}
    if X is not None:
        ref["QX"] = hyper_energy(Vc, wc, X)
    if ref["graph"]:
        ref["L"] = clique_laplacian(Vc, wc, n)
    ref["min_cut"] = min_cut_value(Vc, wc, n) if (Vc >= 0).sum(axis=1).max(initial=0) <= 3 else float("nan")
    return ref


def _ascent(ref, Vh, wh, X0, sign, steps, etas=(0.5, 0.2, 0.05, 0.01)):
    """Projected (normalized) gradient ascent on g(x) = sign * (Q_hat(x)/Q_H(x) - 1) from columns of X0;
    x is kept mean-zero, unit norm (g is shift and scale invariant). Returns best |ratio - 1| found."""
    X = X0 - X0.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    p = X.shape[1]
    best = np.zeros(p)
    for _ in range(steps):
        QH, GH = hyper_energy_grad(ref["verts"], ref["weights"], X)
        Qh, Gh = hyper_energy_grad(Vh, wh, X)
        QH = np.maximum(QH, 1e-300)
        g = sign * (Qh / QH - 1.0)
        best = np.maximum(best, np.abs(Qh / QH - 1.0))
        D = sign * (Gh * QH - Qh * GH) / QH ** 2
        D -= D.mean(axis=0)
        D /= np.maximum(np.linalg.norm(D, axis=0), 1e-300)
        cands = np.concatenate([X + eta * D for eta in etas], axis=1)
        cands -= cands.mean(axis=0)
        cands /= np.linalg.norm(cands, axis=0)
        cQH = hyper_energy(ref["verts"], ref["weights"], cands)
        cQh = hyper_energy(Vh, wh, cands)
        ok = cQH > 1e-12 * max(cQH.max(), 1e-300)
        cg = np.tile(sign, len(etas)) * (cQh / np.maximum(cQH, 1e-300) - 1.0)
        cg = np.where(ok, cg, -np.inf).reshape(len(etas), p)
        j = cg.argmax(axis=0)
        improve = cg[j, np.arange(p)] > g
        if not improve.any():
            break
        newX = cands.reshape(X.shape[0], len(etas), p)[:, j, np.arange(p)]
        X = np.where(improve[None, :], newX, X)
        best = np.maximum(best, np.where(improve, np.abs(cg[j, np.arange(p)]), 0.0))
    return float(best.max(initial=0.0))


def evaluate_sparsifier(H: dict, idx, weight, X, seed=0, ascent_steps: int = 20, ascent_starts: int = 5,
                        ref: dict | None = None, kind=None) -> dict:
    """Quality of the sparsifier ``(idx, weight)`` of H (spec 2.3 Metrics).

    * ``eps_family = max_{x in X, Q_H(x) > 0} |Q_hat(x)/Q_H(x) - 1|``; ``eps_hat`` = max of that and
      ``ascent_steps`` projected-gradient ascent steps on |ratio - 1| from the ``ascent_starts`` worst x
      (a lower bound on the true hypergraph eps);
    * ``eps_exact`` (rank 2 only, else NaN): ``graph_spectral_eps``;
    * ``bisection_err`` = |ratio - 1| on the planted bisection indicator (NaN without ``side``);
    * ``min_cut``, ``min_cut_hat``, ``min_cut_ratio`` (rank <= 3, else NaN);
    * ``worst_kind`` (name of the test-vector kind attaining eps_family, needs ``kind``).
    """
    ref = reference_stats(H, X) if ref is None else ref
    n = int(H["n"])
    idx = np.asarray(idx, dtype=np.int64)
    Vh, wh = coalesce(np.asarray(H["verts"])[idx], np.asarray(weight, float))
    X = np.asarray(X, float)
    QH = ref["QX"] if "QX" in ref else hyper_energy(ref["verts"], ref["weights"], X)
    Qh = hyper_energy(Vh, wh, X)
    ok = QH > 1e-12 * QH.max()
    dev = np.where(ok, Qh / np.where(ok, QH, 1.0) - 1.0, 0.0)
    err = np.abs(dev)
    eps_family = float(err.max(initial=0.0))
    out = {"eps_family": eps_family, "eps_hat": eps_family}
    if kind is not None and err.size:
        out["worst_kind"] = KIND_NAMES[int(np.asarray(kind)[int(err.argmax())])]
    if ascent_steps > 0 and err.size:
        top = np.argsort(-err)[:ascent_starts]
        sign = np.where(dev[top] >= 0, 1.0, -1.0)
        out["eps_hat"] = max(eps_family, _ascent(ref, Vh, wh, X[:, top], sign, ascent_steps))
    out["eps_exact"] = (graph_spectral_eps(ref["L"], clique_laplacian(Vh, wh, n)) if ref["graph"]
                        else float("nan"))
    if "side" in H:
        x = np.asarray(H["side"], float)
        q = hyper_energy(ref["verts"], ref["weights"], x)
        out["bisection_err"] = float(abs(hyper_energy(Vh, wh, x) / q - 1.0)) if q > 0 else float("nan")
    else:
        out["bisection_err"] = float("nan")
    mc = ref.get("min_cut", float("nan"))
    if np.isfinite(mc):
        mch = min_cut_value(Vh, wh, n)
        out.update(min_cut=float(mc), min_cut_hat=float(mch), min_cut_ratio=float(mch / mc) if mc > 0 else
                   float("nan"))
    else:
        out.update(min_cut=float("nan"), min_cut_hat=float("nan"), min_cut_ratio=float("nan"))
    return out


def evaluate_sliding(H: dict, res: dict, seed=0, ascent_steps: int = 20, control_seed=1, **family_kw) -> dict:
    """eps_hat of each sliding-window snapshot against the true window ``[T - W, T)`` (test family built
    per window), and of its negative control: a uniform sample of the window of the same size (weights
    scaled by window size / sample size; drawn from ``control_seed``, so the method's own scores do not depend
    on it), scored on the same test family.

    Returns dict(query_times, eps_hat (Q,), eps_family (Q,), eps_exact (Q,; NaN unless rank 2), eps_hat_uniform
    (Q,), stored (Q,), stored_frac_window (Q,), eps_hat_max, stored_frac_max)."""
    ctrl = _rng(control_seed)
    W = int(res["window"])
    ptr = res["snap_ptr"]
    eh, ef, ex, eu, st = [], [], [], [], []
    for q, T in enumerate(res["query_times"]):
        lo = max(0, int(T) - W)
        win = subhypergraph(H, np.arange(lo, int(T)))
        sidx = res["snap_idx"][ptr[q]:ptr[q + 1]] - lo
        fam = make_test_family(win, seed, **family_kw)
        ref = reference_stats(win, fam["X"])
        ev = evaluate_sparsifier(win, sidx, res["snap_weight"][ptr[q]:ptr[q + 1]], fam["X"], seed,
                                 ascent_steps=ascent_steps, ref=ref)
        uidx = uniform_reservoir(int(T) - lo, sidx.size, ctrl)
        uni = evaluate_sparsifier(win, uidx, win["weights"][uidx] * ((int(T) - lo) / max(uidx.size, 1)), fam["X"],
                                  ascent_steps=ascent_steps, ref=ref)
        eh.append(ev["eps_hat"])
        ef.append(ev["eps_family"])
        ex.append(ev["eps_exact"])
        eu.append(uni["eps_hat"])
        st.append(sidx.size)
    st = np.asarray(st)
    return {"query_times": np.asarray(res["query_times"]), "eps_hat": np.asarray(eh), "eps_family": np.asarray(ef),
            "eps_exact": np.asarray(ex), "eps_hat_uniform": np.asarray(eu),
            "stored": st, "stored_frac_window": st / W, "eps_hat_max": float(max(eh, default=float("nan"))),
            "stored_frac_max": float((st / W).max(initial=0.0))}
