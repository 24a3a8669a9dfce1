"""E3: identifiability, the fibers of the parametrisation (C1 finite fibers, C3 CNN injective): many restarts
fitted to one network's outputs, clustered and compared with its symmetry orbit.

Shahverdi, Marchetti, Kohn, "Learning on a Razor's Edge" (ICLR 2026, arXiv 2505.11846); spec
``shared/papers/neuromanifolds.md`` sections 6.2-6.4. Pure functions, no I/O, no printing; randomness only from
the seeds / Generators passed in. The network engine (architectures, forward-mode Jacobians in float / F_p / Q,
ranks, closed forms) is ``nets``.

    fiber_report(arch, c, X, theta_star, n_starts=50, seed=0, init_scale=1.0, max_nfev=500) -> dict:
        n_starts, n_converged, n_clusters, n_symmetric_clusters, n_other_clusters, orbit_size,
        max_orbit_dist, cluster_orbit_dists
    mlp_permute(arch, theta, perms), orbit_distance(arch, theta, theta_ref) -> (dist, perms)
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .nets import as_arch, forward, forward_and_jacobian
from .points import _mats, init_params


FIBER_RES_TOL = 1e-10   # spec E3: a start "converged" if max |phi(W') - phi(W*)| < 1e-10 * max(1, |phi(W*)|_inf)
CLUSTER_TOL = 1e-6      # two solutions are one cluster if their parameter distance (inf-norm) < 1e-6 * (1 + |W*|_inf)

def mlp_permute(arch, theta, perms: Sequence[Sequence[int]]) -> np.ndarray:
    """Apply hidden-neuron permutations (one per hidden layer): W_l -> P_l W_l P_{l-1}^T, i.e. new
    neuron i of layer l is old neuron perms[l-1][i].  phi is invariant (the MLP symmetry group for
    generic sigma; sigma = x^r adds the per-neuron scalings)."""
    arch = as_arch(arch)
    if arch.kind != "mlp":
        raise ValueError("permutations are an MLP symmetry")
    Ws = [W.copy() for W in _mats(arch, theta)]
    for l, p in enumerate(perms):  # hidden layer l+1
        p = np.asarray(p, int)
        Ws[l] = Ws[l][p, :]
        Ws[l + 1] = Ws[l + 1][:, p]
    return np.concatenate([W.ravel() for W in Ws])

def orbit_distance(arch, theta, theta_ref) -> tuple:
    """Distance (inf-norm) from ``theta`` to the symmetry orbit of ``theta_ref``, and the aligning
    permutations.  MLP: layer by layer, match the rows of W_l (columns already permuted by the previous
    layer's matching) to those of W_l^ref with the Hungarian algorithm.  CNN: no symmetry (plain distance)."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    theta_ref = np.asarray(theta_ref, float)
    if arch.kind == "cnn":
        return float(np.max(np.abs(theta - theta_ref))), []
    from scipy.optimize import linear_sum_assignment  # here, not at the top: only E3 pays scipy.optimize's import

    Ws, Rs = _mats(arch, theta), _mats(arch, theta_ref)
    perms, prev = [], None
    for l in range(arch.n_layers - 1):
        W = Ws[l] if prev is None else Ws[l][:, prev]
        cost = np.abs(Rs[l][:, None, :] - W[None, :, :]).max(axis=2)  # ref row i vs candidate row j
        _, col = linear_sum_assignment(cost)
        perms.append(col)
        prev = col
    aligned = mlp_permute(arch, theta, perms)
    return float(np.max(np.abs(aligned - theta_ref))), perms


def _lm_solve(arch, theta0, X, target, c, free=None, max_nfev=2000):
    """Levenberg-Marquardt on r(theta) = (f_theta(X) - target).ravel() (free coordinates only)."""
    from scipy.optimize import least_squares  # here, not at the top: only E3 and E5 pay scipy.optimize's import

    theta0 = np.asarray(theta0, float)
    free = np.ones(theta0.size, bool) if free is None else np.asarray(free, bool)
    base = theta0.copy()
    cache = {}

    def full(z):
        t = base.copy()
        t[free] = z
        return t

    def fj(z):
        key = z.tobytes()
        if key not in cache:
            cache.clear()
            f, J = forward_and_jacobian(arch, full(z), X, c)
            cache[key] = ((f - target).ravel(), J[:, free])
        return cache[key]

    with np.errstate(all="ignore"):
        try:
            sol = least_squares(lambda z: fj(z)[0], theta0[free], jac=lambda z: fj(z)[1], method="lm",
                                xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=max_nfev)
            z = sol.x
        except (ValueError, np.linalg.LinAlgError):
            z = theta0[free]
    return full(z)


def fiber_report(arch, c, X, theta_star, n_starts: int = 50, seed: int = 0, init_scale: float = 1.0,
                 res_tol: float = FIBER_RES_TOL, cluster_tol: float = CLUSTER_TOL,
                 max_nfev: int = 500) -> dict:
    """E3: solve phi(W') = phi(W*) from ``n_starts`` random starts (LM) and count solution clusters.

    converged: max |phi(W') - phi(W*)| < res_tol * max(1, |phi(W*)|_inf).  Converged solutions are
    clustered greedily (inf-distance < cluster_tol * (1 + |W*|_inf)); a cluster is *symmetric* if its
    representative lies on the symmetry orbit of W* (MLP: hidden-neuron permutations; CNN: W* itself).
    Starts that have not converged after ``max_nfev`` evaluations are dropped (most failures are
    slow drifts to infinity; converged starts need 20-900 evaluations in the pilots).
    Identifiability (finite generic fiber = the permutation orbit for MLPs, one point for CNNs) predicts
    ``n_other_clusters == 0``; ``orbit_size`` = prod_l d_l! bounds n_clusters for MLPs (1 for CNNs).
    Returns n_starts, n_converged, n_clusters, n_symmetric_clusters, n_other_clusters, orbit_size,
    max_orbit_dist (over converged starts), cluster_orbit_dists (list).
    """
    arch = as_arch(arch)
    X = np.asarray(X, float)
    theta_star = np.asarray(theta_star, float)
    target = forward(arch, theta_star, X, c)
    thr = res_tol * max(1.0, float(np.max(np.abs(target))))
    ctol = cluster_tol * (1.0 + float(np.max(np.abs(theta_star))))
    rng = np.random.default_rng(seed)
    sols = []
    for _ in range(int(n_starts)):
        th = _lm_solve(arch, init_params(arch, rng, init_scale), X, target, c, max_nfev=max_nfev)
        with np.errstate(all="ignore"):
            res = np.max(np.abs(forward(arch, th, X, c) - target))
        if np.isfinite(res) and res < thr:
            sols.append(th)
    reps = []
    for th in sols:
        if not any(np.max(np.abs(th - r)) < ctol for r in reps):
            reps.append(th)
    dists = [orbit_distance(arch, r, theta_star)[0] for r in reps]
    all_d = [orbit_distance(arch, th, theta_star)[0] for th in sols]
    n_sym = int(sum(d < ctol for d in dists))
    orbit = 1 if arch.kind == "cnn" else int(np.prod([math.factorial(d) for d in arch.widths[1:-1]]))
    return {
        "n_starts": int(n_starts),
        "n_converged": len(sols),
        "n_clusters": len(reps),
        "n_symmetric_clusters": n_sym,
        "n_other_clusters": len(reps) - n_sym,
        "orbit_size": orbit,
        "max_orbit_dist": float(max(all_d)) if all_d else math.nan,
        "cluster_orbit_dists": [float(d) for d in dists],
    }
