"""Balanced weight assignments (spec 2.4): the importance of a hyperedge is its weight times the largest effective
resistance among its vertex pairs in the graph of balanced clique weights z.

  * ``balance_weights(verts, weights, n, gamma, max_rounds)`` -- global greedy shifting (offline balanced weight
    assignment z, importance ``s_e = w_e max_{uv in e} R_uv(G_z)``); used by the offline sampler.
  * ``local_balance(K_ee, w, gamma)`` -- balancing inside one hyperedge's clique (Kapralov et al. shift); used by
    the online sampler against its prefix.
"""

from __future__ import annotations

import numpy as np

from .hypergraph import effective_resistances, hyperedge_pairs, pair_laplacian


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
