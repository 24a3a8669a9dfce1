"""The methods of this paper: the samplers a run of the sweep or of the sliding window executes, and their dispatcher.

  * ``store-all``                         -- exact baseline (C2 ratio 8 for 8x m).
  * ``uniform_reservoir(m, budget, seed)``   -- ``uniform`` baseline at equal memory (C3).
  * ``offline_importance_sample(...)``    -- ``offline-is`` (offline JLS/Lee-style sampler; reducer).
  * ``online_sparsify(..., prefix=...)``  -- ``online-exact`` / ``online-sketch`` (Alg. 1-2; C1, C2).
  * ``stream_sparsify(..., pre_thin=...)``-- ``stream`` (online pre-thinning + merge-and-reduce; C1, C2,
    C3, C4) and its baseline ``mr-only`` (merge-and-reduce without pre-thinning).
  * ``shuffled_importance_sample(p, ...)`` -- ``online-shuffled``, the negative control (online-exact's
    probabilities permuted over the hyperedges).
  * ``sliding_window_sparsify(...)``      -- ``sliding`` (reverse-online sampling; C5).
  * ``run_method(method, H, seed, **params)`` dispatcher over ``METHODS`` (the sparsify_eval step);
    ``run_sliding(H, ...)`` (the sliding step).

The hypergraph and its linear algebra are in ``hypergraph``, the balanced weights in ``balancing``, the scores of a
sparsifier in ``metrics``.

Deviations / interpretation choices (also in the report): all sampling rates are given as an
oversampling ``rho`` (``p_e = min(1, rho * importance_e)``, spec's C eps^-2 log n folded in, helper
``hypergraph.rho_from_eps``); the online prefix inverse is ``(L + lambda I + mu J/n)^{-1}``,
``lambda = reg * max(1, trace(L)/n)`` (spec: 1e-6 trace/n), kept by Woodbury updates and recomputed
exactly every ``refresh`` updates; the sliding window recomputes the reverse-online probabilities in batches
(``recompute_every`` arrivals) rather than after every arrival.

Parameters measured to fit the spec's claims at n = 40 (2-core pilot runs): online rho = 20 (rho_sketch = 8);
stream rho = 20, rho_reduce = 60; mr-only rho_reduce = 60; merge-and-reduce block B = ceil(rho_reduce (n - 1))
(``hypergraph.merge_block_size``); offline-is rho = 20;
uniform budget = stream's ``peak_stored`` (median of 5 reservoir seeds); sliding window = 8000,
rho = 30, recompute_every = 1000 on m = 32000. Smoke: n = 30, rho = 10, rho_reduce = 30.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .balancing import _small, balance_weights, local_balance
from .hypergraph import WORD_BITS, _reg_inverse, _rng, hyperedge_pairs, merge_block_size, pair_laplacian, space_bits

# Appended names only: a method's position seeds its random numbers (sparsify_eval.RUN_NAMES, instances.rng_for).
METHODS = ("store-all", "uniform", "offline-is", "online-exact", "online-sketch", "stream", "mr-only",
           "online-shuffled")


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
