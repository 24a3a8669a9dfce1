"""Core algorithms of the ``neuromanifolds`` reproduction (pure functions, no I/O, no printing).

Paper: Shahverdi, Marchetti, Kohn, "Learning on a Razor's Edge: identifiability and singularity of
polynomial neural networks" (ICLR 2026, arXiv 2505.11846).  No official code; this follows
``shared/papers/neuromanifolds.md`` (spec sections 6.2-6.4).  The network engine (architectures,
forward-mode Jacobians in float / F_p / Q, ranks, closed forms) lives in ``nets.py``.

Setting.  Bias-free polynomial networks ``f_W(x) = W_L sigma(W_{L-1} ... sigma(W_1 x))`` with
``sigma(x) = sum_{i=1}^r c_i x^i`` (generic: ``c_i ~ N(0,1)``; contrast: the monomial ``x^r``); MLPs with
widths ``(d_0, ..., d_L)`` and single-channel 1-D CNNs with filters ``k_l`` / strides ``s_l`` (one output,
input = one receptive field).  The neuromanifold is the image ``M`` of the parametrisation; we use

    phi(W) = (f_W(x_1), ..., f_W(x_N)) in R^{N d_L},

whose Jacobian has the rank of the coefficient map's Jacobian at generic points x_n once N d_L >= that
rank (the tangent space is a space of polynomials of dimension <= #params, which generic evaluation
points separate).  ``dim M`` = generic rank of the Jacobian.

Architecture specs are plain dicts: ``{"kind": "mlp", "widths": [2, 2, 1]}`` or
``{"kind": "cnn", "kernels": [3, 2], "strides": [2, 1]}``.  Parameters are flat float64 vectors
(layer after layer; MLP layers row-major).  Randomness only from the seeds / Generators passed in.

Public API (claim served, spec 6.4)
-----------------------------------
setup
    make_arch(spec) -> Arch (widths, n_params, n_hidden, label());  mlp_arch(widths), cnn_arch(k, s)
    arch_spec(params entry) -> spec;  point_seed(seed, label, r);  random_point(spec, r, n_points, seed) ->
        (arch, c, theta, X, rng) of a Table A row (E3-E6 work at that very point)
    activation_coeffs(r, kind="generic"|"monomial", rng) -> c (length r+1, c_0 = 0)
    init_params(arch, rng, scale=1.0, mask=None) -> theta ~ N(0, scale^2/fan_in)
    sample_inputs(n, d0, rng) -> X ~ N(0, I);  forward / jacobian / forward_and_jacobian
E1/E2 dimension (C1 MLP dim = #params, C2 monomial contrast, C3 CNN dim = sum k)
    architecture_dimension(spec, r, activation="generic"|"monomial"|[c_0..c_r], n_points=200, seed=0,
        exact=True) -> dict: arch, kind, activation, degree, n_points, n_params, n_hidden, ambient,
        formula, expected, upper_bound, rank_numeric, rank_numeric_raw, gap, singular_values,
        rank_exact_lb, certified, coeffs  (+ CNN: rank_zero_padded, rank_zero_padded_exact_lb,
        singular_values_zero_padded)
    dimension_report(arch, c, X, theta, rtol=1e-8, exact=True, exact_rows=None) -> the same, one point
    numerical_rank(J, rtol=1e-8, equilibrate=True) -> {rank, singular_values, gap}
    exact_rank_lower_bound(arch, theta, X, c, n_rows=None) -> int (rank mod p of the exact Jacobian)
    rank_mod_p, rank_rational, jacobian_mod_p, jacobian_rational (exact cross-checks)
    closed forms: formula_dim, ambient_dim, degree_support, secant_veronese_dim (Alexander-Hirschowitz),
    quadratic_generic_dim
E3 identifiability / fibers (C1 finite fibers, C3 CNN injective)
    fiber_report(arch, c, X, theta_star, n_starts=50, seed=0, init_scale=1.0, max_nfev=500) -> dict:
        n_starts, n_converged, n_clusters, n_symmetric_clusters, n_other_clusters, orbit_size,
        max_orbit_dist, cluster_orbit_dists
    mlp_permute(arch, theta, perms), orbit_distance(arch, theta, theta_ref) -> (dist, perms)
E4 singular points from sparse subnetworks (C4)
    kill_neuron, remove_neuron, embed_dead_neuron
    mlp_subnetwork_report(arch, c, X, theta, layer=1, neuron=0) -> dict: arch, layer, neuron, n_params,
        rank_numeric, rank_exact_lb, rank_sub, n_params_sub, singular_values
    cnn_shift_vectors(arch) -> [t], cnn_shift_mask(arch, t), shift_cnn_params(arch, theta, t),
    cnn_zero_padded_params(arch, rng, shifts=None)
    cnn_node_report(arch, c, X, theta, shifts) -> dict: arch, shifts, sum_k, max_abs_diff, rank_W,
        rank_W_shift, rank_joint, rank_joint_exact_lb
    cnn_rescale(arch, theta, r, t), cnn_symmetric_pair_report(arch, r, X, theta) -> the same keys for W and
        its x^r-symmetric image (C4's control: two preimages, one tangent space)
E5 critical exposure (C5)
    mse_loss_and_grad(arch, theta, X, Y, c) -> (loss, grad)
    fit_critical_point(arch, theta0, X, Y, c, free=None) -> {theta, loss, grad_norm, max_abs_param,
        converged, finite}
    mlp_critical_exposure(widths, c, X, Y, layer=1, neuron=None, seed=0) -> dict: converged, loss_sub,
        loss_full, grad_sub_norm, grad_full_norm, grad_dead_max, grad_alive_diff, grad_norm_abs_diff,
        full_critical, grad_exposed_max, not_critical
    cnn_critical_exposure(kernels, strides, c, X, Y, zero_mask=None, seed=0) -> dict: converged, loss,
        grad_sub_norm, grad_full_norm, grad_zeroed_max, grad_exposed_max, full_critical, not_critical
E6 sparsity bias, qualitative (C6)
    gd_train(arch, theta0, X, Y, c, lr, n_steps) -> {theta, loss, n_steps_done, diverged}
    sparsity_bias_trial(arch, c, X, teacher, seed, init_scale=1e-2, lr=0.05, n_steps=2000, Y=None)
        -> {loss, diverged, min_rel, n_sparse, sparse}
"""

from __future__ import annotations

import math
import zlib
from itertools import product
from typing import Sequence

import numpy as np

from .nets import (
    MERSENNE_61,
    RANK_RTOL,
    Arch,
    activation_coeffs,
    ambient_dim,
    as_arch,
    cnn_arch,
    degree_support,
    forward,
    forward_and_jacobian,
    formula_dim,
    jacobian,
    jacobian_mod_p,
    jacobian_rational,
    mlp_arch,
    numerical_rank,
    quadratic_generic_dim,
    rank_mod_p,
    rank_rational,
    secant_veronese_dim,
)

__all__ = [
    # setup
    "Arch", "make_arch", "arch_spec", "point_seed", "mlp_arch", "cnn_arch", "activation_coeffs", "init_params",
    "sample_inputs", "random_point",
    "forward", "jacobian", "forward_and_jacobian",
    # ranks and closed forms
    "numerical_rank", "rank_mod_p", "rank_rational", "jacobian_mod_p", "jacobian_rational",
    "exact_rank_lower_bound", "formula_dim", "ambient_dim", "degree_support", "secant_veronese_dim",
    "quadratic_generic_dim", "is_monomial",
    # E1/E2
    "dimension_report", "architecture_dimension",
    # E3
    "mlp_permute", "orbit_distance", "fiber_report",
    # E4
    "kill_neuron", "remove_neuron", "mlp_subnetwork_report", "cnn_shift_vectors", "cnn_shift_mask",
    "shift_cnn_params", "cnn_node_report", "cnn_zero_padded_params", "cnn_rescale", "cnn_symmetric_pair_report",
    # E5
    "mse_loss_and_grad", "fit_critical_point", "embed_dead_neuron", "mlp_critical_exposure",
    "cnn_critical_exposure",
    # E6
    "gd_train", "sparsity_bias_trial",
]

FIBER_RES_TOL = 1e-10   # spec E3: a start "converged" if max |phi(W') - phi(W*)| < 1e-10 * max(1, |phi(W*)|_inf)
CLUSTER_TOL = 1e-6      # two solutions are one cluster if their parameter distance (inf-norm) < 1e-6 * (1 + |W*|_inf)
CRIT_GTOL = 1e-8        # spec C5: a sub-network fit counts as a critical point if ||grad L_sub||_2 < 1e-8
DEAD_GRAD_TOL = 1e-12   # spec C5: dead-neuron gradient components "exactly 0"
CNN_EXPOSED_TOL = 1e-4  # spec C5: |dL/dw_0| > 1e-4 means "not critical"
MAX_PARAM = 1e3         # a fit whose weights exceed this drifts to a critical point at infinity: not converged


def make_arch(spec) -> Arch:
    """Normalise a dict spec (or an Arch) into an ``Arch`` (widths, parameter layout)."""
    return as_arch(spec)


def arch_spec(entry) -> dict:
    """params.yaml entry -> architecture dict: a list of widths is an MLP, {kernels, strides} a CNN."""
    if isinstance(entry, dict):
        return {"kind": "cnn", "kernels": list(entry["kernels"]), "strides": list(entry["strides"])}
    return {"kind": "mlp", "widths": list(entry)}


def point_seed(seed: int, label: str, r: int) -> int:
    """One seed per (architecture, degree), independent of the order of the lists: each row is reproducible alone."""
    return int(np.random.SeedSequence([seed, zlib.crc32(label.encode()), r]).generate_state(1)[0])


def is_monomial(c) -> bool:
    """True if sigma has exactly one nonzero coefficient of degree >= 1 (sigma = c_r x^r)."""
    c = np.asarray(c, float)
    return bool(np.count_nonzero(c) == 1 and c[0] == 0)


def _fan_in(arch: Arch) -> np.ndarray:
    """Per-parameter fan-in: d_{l-1} for an MLP layer, k_l for a CNN layer."""
    out = []
    for l, b in enumerate(arch.bases):
        fan = arch.kernels[l] if arch.kind == "cnn" else arch.widths[l]
        out.append(np.full(b.shape[0], float(fan)))
    return np.concatenate(out)


def init_params(arch, rng: np.random.Generator, scale: float = 1.0, mask=None) -> np.ndarray:
    """``theta_p ~ N(0, scale^2 / fan_in)`` (keeps pre-activations O(scale) for x ~ N(0, I), so that
    degree-r^{L-1} polynomials stay well scaled); entries outside a boolean ``mask`` are exactly 0."""
    arch = as_arch(arch)
    th = scale * rng.standard_normal(arch.n_params) / np.sqrt(_fan_in(arch))
    if mask is not None:
        th = np.where(np.asarray(mask, bool), th, 0.0)
    return th


def sample_inputs(n: int, d0: int, rng: np.random.Generator) -> np.ndarray:
    """``N`` generic input points ``x_n ~ N(0, I_{d_0})`` (spec 6.3)."""
    return rng.standard_normal((int(n), int(d0)))


# ----------------------------------------------------------------------------------------------
# E1 / E2: dimension of the neuromanifold
# ----------------------------------------------------------------------------------------------

def exact_rank_lower_bound(arch, theta, X, c, n_rows: int | None = None, p: int = MERSENNE_61) -> int:
    """Rank over F_p of the *exact* Jacobian at the rational point (theta, X, c) (floats are exact dyadic
    rationals), using the first ``n_rows`` inputs (default: all).  rank_p <= rank_Q(J(point)) <= generic
    rank = dim M, so this is a certified lower bound of dim M (no floating-point tolerance involved)."""
    arch = as_arch(arch)
    X = np.asarray(X, float)
    if n_rows is not None:
        X = X[: int(n_rows)]
    return rank_mod_p(jacobian_mod_p(arch, theta, X, c, p), p)


def dimension_report(arch, c, X, theta, rtol: float = RANK_RTOL, exact: bool = True,
                     exact_rows: int | None = None) -> dict:
    """Numerical dimension at one parameter point vs the paper's formula.

    rank_numeric        #{s_i > rtol s_max} of the equilibrated Jacobian (``numerical_rank``)
    rank_numeric_raw    the same without equilibration (the spec's recipe; fails for deep nets, r = 5)
    rank_exact_lb       exact rank mod p at the same point (certified lower bound of dim M), if ``exact``
    formula             paper formula for this sigma (``formula_dim``: #params, #params - #hidden for
                        x^r, sum k for CNNs, sum k - (L - 1) for x^r CNNs), n_params, n_hidden, ambient
    expected            min(formula, ambient, N d_L): the value the rank should take
    upper_bound         min(proved upper bound, ambient, N d_L); the proved bound is #params, or for
                        sigma = x^r (scaling symmetries) #params - #hidden (MLP), sum k - (L - 1) (CNN)
    certified           rank_exact_lb == upper_bound (then dim M = upper_bound is a proof, not a guess)
    singular_values     normalised spectrum (for Fig. B), gap = s_rank / s_{rank+1}
    """
    arch = as_arch(arch)
    X = np.asarray(X, float)
    mono = is_monomial(c)
    J = jacobian(arch, theta, X, c)
    nr = numerical_rank(J, rtol)
    raw = numerical_rank(J, rtol, equilibrate=False)
    amb = ambient_dim(arch, c)
    rows = J.shape[0]
    form = formula_dim(arch, "monomial" if mono else "generic")
    proved = form if mono else arch.n_params  # x^r: the bound its scaling symmetries prove; generic: #params
    out = {
        "arch": arch.label(),
        "kind": arch.kind,
        "activation": "monomial" if mono else "generic",
        "degree": len(c) - 1,
        "n_points": int(X.shape[0]),
        "n_params": arch.n_params,
        "n_hidden": arch.n_hidden,
        "ambient": amb,
        "formula": form,
        "expected": int(min(form, amb, rows)),
        "upper_bound": int(min(proved, amb, rows)),
        "rank_numeric": nr["rank"],
        "rank_numeric_raw": raw["rank"],
        "gap": nr["gap"],
        "singular_values": nr["singular_values"],
    }
    if exact:
        out["rank_exact_lb"] = exact_rank_lower_bound(arch, theta, X, c, exact_rows)
        out["certified"] = bool(out["rank_exact_lb"] == out["upper_bound"])
    return out


def architecture_dimension(spec, r: int, activation="generic", n_points: int = 200,
                           seed: int = 0, exact: bool = True) -> dict:
    """One architecture -> ``dimension_report`` at a random point (seeded: c, theta, X from one
    Generator), plus the activation coefficients used (``coeffs``).  ``activation``: "generic",
    "monomial", or explicit coefficients c_0..c_r (e.g. [0, 0, 1, 1] for the paper's x^3 + x^2;
    ``r`` is then ignored).  For CNNs also the rank at the
    zero-padded point of ``cnn_zero_padded_params`` (``rank_zero_padded``, ``rank_zero_padded_exact_lb``)."""
    arch = as_arch(spec)
    rng = np.random.default_rng(seed)
    if isinstance(activation, str):
        c = activation_coeffs(r, activation, rng)
    else:
        c = np.asarray(activation, float)
    theta = init_params(arch, rng)
    X = sample_inputs(n_points, arch.widths[0], rng)
    exact_rows = min(n_points, 2 * arch.n_params + 10)
    rep = dimension_report(arch, c, X, theta, exact=exact, exact_rows=exact_rows)
    rep["coeffs"] = c
    if arch.kind == "cnn":
        thz = cnn_zero_padded_params(arch, rng)
        J = jacobian(arch, thz, X, c)
        z = numerical_rank(J)
        rep["rank_zero_padded"] = z["rank"]
        rep["singular_values_zero_padded"] = z["singular_values"]
        if exact:
            rep["rank_zero_padded_exact_lb"] = exact_rank_lower_bound(arch, thz, X, c, exact_rows)
    return rep


def random_point(spec, r: int, n_points: int, seed: int):
    """(arch, c, theta, X, rng): the generic sigma, parameters and inputs that architecture_dimension draws
    for this seed, in the same order, so that E3/E4 work at the very point of the Table A row."""
    arch = make_arch(spec)
    rng = np.random.default_rng(seed)
    c = activation_coeffs(r, "generic", rng)
    theta = init_params(arch, rng)
    X = sample_inputs(n_points, arch.widths[0], rng)
    return arch, c, theta, X, rng


# ----------------------------------------------------------------------------------------------
# E3: fibers / identifiability
# ----------------------------------------------------------------------------------------------

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


def _mats(arch: Arch, theta) -> list:
    theta = np.asarray(theta, float)
    return [theta[arch.layer_slice(l)].reshape(arch.widths[l + 1], arch.widths[l])
            for l in range(arch.n_layers)]


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


# ----------------------------------------------------------------------------------------------
# E4: singular points from sparse subnetworks
# ----------------------------------------------------------------------------------------------

def _neuron_index(arch: Arch, layer: int, neuron: int):
    """Parameter indices of hidden neuron ``neuron`` of hidden layer ``layer`` (1..L-1):
    its incoming row of W_layer and its outgoing column of W_{layer+1}."""
    if arch.kind != "mlp" or not 1 <= layer < arch.n_layers:
        raise ValueError("need an MLP hidden layer 1..L-1")
    din, d, dout = arch.widths[layer - 1], arch.widths[layer], arch.widths[layer + 1]
    if not 0 <= neuron < d:
        raise ValueError("neuron out of range")
    o_in, o_out = arch.offsets[layer - 1], arch.offsets[layer]
    inc = o_in + neuron * din + np.arange(din)
    out = o_out + np.arange(dout) * d + neuron
    return inc, out


def kill_neuron(arch, theta, layer: int = 1, neuron: int = 0) -> np.ndarray:
    """The subnetwork point: zero the incoming and outgoing weights of one hidden neuron."""
    arch = as_arch(arch)
    th = np.array(theta, float, copy=True)
    inc, out = _neuron_index(arch, layer, neuron)
    th[inc] = 0.0
    th[out] = 0.0
    return th


def remove_neuron(arch, theta, layer: int = 1, neuron: int = 0) -> tuple:
    """(sub_arch, theta_sub): the MLP with that neuron deleted (widths d_layer - 1)."""
    arch = as_arch(arch)
    inc, out = _neuron_index(arch, layer, neuron)
    keep = np.ones(arch.n_params, bool)
    keep[inc] = False
    keep[out] = False
    w = list(arch.widths)
    w[layer] -= 1
    return mlp_arch(w), np.asarray(theta, float)[keep]


def embed_dead_neuron(sub_arch, theta_sub, layer: int = 1, neuron: int = 0) -> tuple:
    """Inverse of ``remove_neuron``: insert a dead neuron (w_in = 0, w_out = 0) -> (full_arch, theta)."""
    sub = as_arch(sub_arch)
    w = list(sub.widths)
    w[layer] += 1
    full = mlp_arch(w)
    inc, out = _neuron_index(full, layer, neuron)
    keep = np.ones(full.n_params, bool)
    keep[inc] = False
    keep[out] = False
    th = np.zeros(full.n_params)
    th[keep] = np.asarray(theta_sub, float)
    return full, th


def mlp_subnetwork_report(arch, c, X, theta, layer: int = 1, neuron: int = 0, exact: bool = True) -> dict:
    """E4 (MLP, "cusp type"): rank of J at the dead-neuron point ``kill_neuron(theta)``.

    With sigma(0) = 0 the dead neuron's columns of J vanish identically (d/dw_in carries the factor
    w_out = 0, d/dw_out the factor sigma(0) = 0), so rank J = rank of the subnetwork's Jacobian <
    #params = dim M: the parametrisation drops rank there.  Returns rank_numeric, rank_exact_lb,
    n_params, rank_sub (numerical rank of the (d_layer - 1)-subnetwork at the same weights),
    n_params_sub, singular_values.  (A rank drop of phi is evidence, not a proof, that the image point is
    singular.)"""
    arch = as_arch(arch)
    th0 = kill_neuron(arch, theta, layer, neuron)
    J = jacobian(arch, th0, X, c)
    nr = numerical_rank(J)
    sub, ths = remove_neuron(arch, th0, layer, neuron)
    out = {
        "arch": arch.label(),
        "layer": int(layer),
        "neuron": int(neuron),
        "n_params": arch.n_params,
        "rank_numeric": nr["rank"],
        "singular_values": nr["singular_values"],
        "n_params_sub": sub.n_params,
        "rank_sub": numerical_rank(jacobian(sub, ths, X, c))["rank"],
    }
    if exact:
        out["rank_exact_lb"] = exact_rank_lower_bound(arch, th0, X, c, min(len(X), 2 * arch.n_params + 10))
    return out


def cnn_shift_vectors(arch) -> list:
    """Integer shift vectors t = (t_1..t_L) != 0, |t_l| <= k_l - 1, with the integrality condition

        sum_l t_l s_1 ... s_{l-1} = 0.

    Shifting filter l by t_l (w'_{l,j} = w_{l,j - t_l}) moves the receptive field of the output by
    t_l s_1...s_{l-1} input positions, so a zero-padded W (``cnn_shift_mask``) and its shift W' give the
    same function exactly when the total displacement vanishes: the proper subnetworks of spec claim 3."""
    arch = as_arch(arch)
    if arch.kind != "cnn":
        raise ValueError("CNN only")
    S = np.cumprod((1,) + arch.strides[:-1])
    out = []
    for t in product(*[range(-(k - 1), k) for k in arch.kernels]):
        if any(t) and int(np.dot(t, S)) == 0:
            out.append(tuple(int(v) for v in t))
    return out


def cnn_shift_mask(arch, shifts) -> np.ndarray:
    """Boolean support of W for which ``shift_cnn_params(W, shifts)`` is defined: filter l keeps
    entries j < k_l - t_l if t_l >= 0 (its last t_l entries are zero), entries j >= -t_l if t_l < 0."""
    arch = as_arch(arch)
    m = []
    for k, t in zip(arch.kernels, shifts):
        j = np.arange(k)
        m.append(j < k - t if t >= 0 else j >= -t)
    return np.concatenate(m)


def shift_cnn_params(arch, theta, shifts) -> np.ndarray:
    """W' with w'_{l,j} = w_{l,j - t_l}; raises ValueError if a nonzero entry would leave its filter."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    if np.any(theta[~cnn_shift_mask(arch, shifts)] != 0):
        raise ValueError("theta is not zero-padded for these shifts")
    out = []
    for l, t in enumerate(shifts):
        w = theta[arch.layer_slice(l)]
        out.append(np.roll(w, t))  # the entries that wrap around are zero by the mask
    return np.concatenate(out)


def cnn_zero_padded_params(arch, rng: np.random.Generator, shifts=None) -> np.ndarray:
    """A random zero-padded CNN point: random weights on ``cnn_shift_mask(shifts)`` (default: the first
    of ``cnn_shift_vectors``; if there is none, only the first entry of the first filter is zeroed)."""
    arch = as_arch(arch)
    if shifts is None:
        sv = cnn_shift_vectors(arch)
        shifts = sv[0] if sv else None
    if shifts is None:
        mask = np.ones(arch.n_params, bool)
        mask[0] = False
    else:
        mask = cnn_shift_mask(arch, shifts)
    return init_params(arch, rng, mask=mask)


def _pair_report(arch, c, X, theta, theta2, exact: bool = True) -> dict:
    """Two parameter points of one CNN: max |phi(W) - phi(W')|, the ranks of J_W, J_W' and [J_W, J_W']
    (float and, if ``exact``, the exact rank mod p of the joint Jacobian), and sum k."""
    J1, J2 = jacobian(arch, theta, X, c), jacobian(arch, theta2, X, c)
    out = {
        "arch": arch.label(),
        "sum_k": int(sum(arch.kernels)),
        "max_abs_diff": float(np.max(np.abs(forward(arch, theta, X, c) - forward(arch, theta2, X, c)))),
        "rank_W": numerical_rank(J1)["rank"],
        "rank_W_shift": numerical_rank(J2)["rank"],
        "rank_joint": numerical_rank(np.hstack([J1, J2]))["rank"],
    }
    if exact:
        n = min(len(X), 4 * arch.n_params + 10)
        Jp = np.hstack([jacobian_mod_p(arch, theta, X[:n], c), jacobian_mod_p(arch, theta2, X[:n], c)])
        out["rank_joint_exact_lb"] = rank_mod_p(Jp)
    return out


def cnn_node_report(arch, c, X, theta, shifts, exact: bool = True) -> dict:
    """E4 (CNN, "node type"): W zero-padded for ``shifts``, W' = shift(W).  phi(W) = phi(W') while the
    two tangent spaces differ: rank [J_W, J_W'] > sum k (two branches of M through one point) although
    each of J_W, J_W' has full rank sum k (regular parametrisation).  Returns max_abs_diff, rank_W,
    rank_W_shift, rank_joint, rank_joint_exact_lb, sum_k, shifts."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    return _pair_report(arch, c, X, theta, shift_cnn_params(arch, theta, shifts), exact) | {"shifts": list(shifts)}


def cnn_rescale(arch, theta, r: int, t: float = 2.0, layer: int = 0) -> np.ndarray:
    """The x^r scaling symmetry of a CNN: filter ``layer`` times t, filter ``layer + 1`` times t^{-r} (the next
    layer's input is scaled by t^r, so f is unchanged).  t = 2 keeps dyadic parameters dyadic (exact ranks)."""
    arch = as_arch(arch)
    out = np.asarray(theta, float).copy()
    out[arch.layer_slice(layer)] *= t
    out[arch.layer_slice(layer + 1)] *= float(t) ** (-int(r))
    return out


def cnn_symmetric_pair_report(arch, r: int, X, theta, t: float = 2.0, exact: bool = True) -> dict:
    """Control of the node (C4): with sigma = x^r, W and its image W' under the scaling symmetry
    (``cnn_rescale``): the same function and, since phi(S W) = phi(W) for all W gives J_{SW} S = J_W, the same
    tangent space, so rank [J_W, J_W'] = rank J_W <= sum k - (L - 1): two preimages, no node.  Same keys as
    ``cnn_node_report`` (``shifts`` empty)."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    c = activation_coeffs(r, "monomial")
    return _pair_report(arch, c, X, theta, cnn_rescale(arch, theta, r, t), exact) | {"shifts": []}


# ----------------------------------------------------------------------------------------------
# E5: critical points of the MSE loss
# ----------------------------------------------------------------------------------------------

def mse_loss_and_grad(arch, theta, X, Y, c) -> tuple:
    """L(W) = (1/N) sum_n ||f_W(x_n) - y_n||^2 and its gradient (2/N) J^T (f - Y)."""
    arch = as_arch(arch)
    f, J = forward_and_jacobian(arch, theta, X, c)
    r = (f - np.asarray(Y, float).reshape(f.shape)).ravel()
    n = f.shape[0]
    return float(r @ r / n), 2.0 * (J.T @ r) / n


def fit_critical_point(arch, theta0, X, Y, c, free=None, gtol: float = CRIT_GTOL,
                       max_nfev: int = 3000, newton_steps: int = 8, max_param: float = MAX_PARAM) -> dict:
    """Fit the free coordinates to a critical point of L: Levenberg-Marquardt on the residual
    (f - Y)/sqrt(N) (spec: BFGS often stalls on these badly conditioned polynomial losses), then a few
    Newton polishing steps on the gradient restricted to the free coordinates (Hessian by central
    differences of the exact gradient; a step is kept only if it lowers ||grad||).
    Polynomial-network losses often have their infimum at infinity (two neurons merging with
    outgoing weights -> +-inf, approximating a derivative a (sigma(w + d) - sigma(w)) ~ a d sigma'(w));
    such runs crawl with a small gradient and are not critical points: ``converged`` needs
    grad_norm < gtol AND max |theta| <= max_param (1e3).
    Returns theta, loss, grad_norm (free part, 2-norm), max_abs_param, converged, finite."""
    arch = as_arch(arch)
    X = np.asarray(X, float)
    Y = np.asarray(Y, float).reshape(X.shape[0], arch.widths[-1])
    free = np.ones(arch.n_params, bool) if free is None else np.asarray(free, bool)
    th = _lm_solve(arch, theta0, X, Y, c, free, max_nfev=max_nfev)

    def g(t):
        return mse_loss_and_grad(arch, t, X, Y, c)[1][free]

    with np.errstate(all="ignore"):
        gn = np.linalg.norm(g(th))
        for _ in range(int(newton_steps)):
            if not np.isfinite(gn) or gn < 1e-3 * gtol:
                break
            z = th[free]
            h = 1e-6 * max(1.0, float(np.max(np.abs(z))))
            H = np.empty((z.size, z.size))
            for i in range(z.size):
                tp, tm = th.copy(), th.copy()
                tp[np.flatnonzero(free)[i]] += h
                tm[np.flatnonzero(free)[i]] -= h
                H[:, i] = (g(tp) - g(tm)) / (2 * h)
            H = 0.5 * (H + H.T)
            try:
                step = np.linalg.lstsq(H, g(th), rcond=1e-12)[0]
            except np.linalg.LinAlgError:
                break
            cand = th.copy()
            cand[free] = z - step
            gc = np.linalg.norm(g(cand))
            if not gc < gn:
                break
            th, gn = cand, gc
        loss = mse_loss_and_grad(arch, th, X, Y, c)[0]
    finite = bool(np.all(np.isfinite(th)) and np.isfinite(loss))
    big = float(np.max(np.abs(th))) if finite else math.inf
    return {"theta": th, "loss": float(loss), "grad_norm": float(gn), "max_abs_param": big,
            "converged": bool(finite and gn < gtol and big <= max_param), "finite": finite}


def mlp_critical_exposure(widths, c, X, Y, layer: int = 1, neuron: int = None, seed: int = 0,
                          init_scale: float = 0.5, gtol: float = CRIT_GTOL) -> dict:
    """E5 (MLP): train the subnetwork (one neuron fewer in hidden layer ``layer``) to a critical point,
    embed it with a dead neuron (w_in = 0, w_out = 0; default: the last neuron) and evaluate the full
    gradient.  Since sigma(0) = 0,

        dL/dw_out = (2/N) sum_n r_n sigma(0 . z_n) = 0,    dL/dw_in = (2/N) sum_n r_n w_out sigma'(.) z_n = 0,

    and the other components equal the subnetwork's gradient: every critical point of the sub-MLP is
    a critical point of the full MLP, for every data set (an open set of data: the singular point is
    "critically exposed").  Returns converged (||grad L_sub|| < gtol after the fit), loss_sub,
    loss_full, grad_sub_norm, grad_full_norm, grad_dead_max (max |dead components|), grad_alive_diff
    (max |g_full[alive] - g_sub|), grad_norm_abs_diff (| ||g_full|| - ||g_sub|| |), full_critical
    (converged and ||grad L_full|| < gtol); as ``cnn_critical_exposure`` also grad_exposed_max (= grad_dead_max)
    and not_critical (grad_exposed_max > 1e-4), so that either kind can be judged by the other's checks."""
    full = mlp_arch(widths)
    if neuron is None:
        neuron = full.widths[layer] - 1
    w = list(full.widths)
    w[layer] -= 1
    sub = mlp_arch(w)
    rng = np.random.default_rng(seed)
    fit = fit_critical_point(sub, init_params(sub, rng, init_scale), X, Y, c, gtol=gtol)
    full_arch, th_full = embed_dead_neuron(sub, fit["theta"], layer, neuron)
    with np.errstate(all="ignore"):
        loss_full, g_full = mse_loss_and_grad(full_arch, th_full, X, Y, c)
        g_sub = mse_loss_and_grad(sub, fit["theta"], X, Y, c)[1]
    inc, out = _neuron_index(full_arch, layer, neuron)
    alive = np.ones(full_arch.n_params, bool)
    alive[inc] = False
    alive[out] = False
    dead = g_full[~alive]
    gs, gf = float(np.linalg.norm(g_sub)), float(np.linalg.norm(g_full))
    return {
        "converged": fit["converged"],
        "loss_sub": fit["loss"],
        "loss_full": float(loss_full),
        "grad_sub_norm": gs,
        "grad_full_norm": gf,
        "grad_dead_max": float(np.max(np.abs(dead))),
        "grad_exposed_max": float(np.max(np.abs(dead))),
        "grad_alive_diff": float(np.max(np.abs(g_full[alive] - g_sub))),
        "grad_norm_abs_diff": float(abs(gf - gs)),
        "full_critical": bool(fit["converged"] and gf < gtol),
        "not_critical": bool(np.max(np.abs(dead)) > CNN_EXPOSED_TOL),
    }


def cnn_critical_exposure(kernels, strides, c, X, Y, zero_mask=None, seed: int = 0,
                          init_scale: float = 0.5, gtol: float = CRIT_GTOL) -> dict:
    """E5 (CNN): train the CNN with the entries ``~zero_mask`` fixed at 0 (default: the proper subnetwork
    ``cnn_shift_mask`` of the first shift vector, e.g. W = ([0, a, b], [c, 0]) for k = (3, 2), s = (1, 1);
    pass a mask with one False entry for "one boundary filter entry fixed at 0") to a critical point of
    L restricted to that subspace, then evaluate the full gradient.  The CNN parametrisation is regular
    there, so the point is a critical point of the full loss only if also dL/dw = 0 on the zeroed
    entries, which fails for generic data: returns converged, loss, grad_sub_norm, grad_full_norm,
    grad_zeroed_max (max |dL/dw| over the zeroed entries; also as grad_exposed_max), not_critical
    (grad_zeroed_max > 1e-4) and, as ``mlp_critical_exposure``, full_critical (converged and ||grad L|| < gtol)."""
    arch = cnn_arch(kernels, strides)
    if zero_mask is None:
        sv = cnn_shift_vectors(arch)
        if not sv:
            raise ValueError("no proper subnetwork for this CNN; pass zero_mask")
        zero_mask = cnn_shift_mask(arch, sv[0])
    free = np.asarray(zero_mask, bool)
    rng = np.random.default_rng(seed)
    fit = fit_critical_point(arch, init_params(arch, rng, init_scale, mask=free), X, Y, c, free=free,
                             gtol=gtol)
    with np.errstate(all="ignore"):
        loss, g = mse_loss_and_grad(arch, fit["theta"], X, Y, c)
    gz = float(np.max(np.abs(g[~free]))) if np.any(~free) else 0.0
    return {
        "converged": fit["converged"],
        "loss": float(loss),
        "grad_sub_norm": fit["grad_norm"],
        "grad_full_norm": float(np.linalg.norm(g)),
        "grad_zeroed_max": gz,
        "grad_exposed_max": gz,
        "full_critical": bool(fit["converged"] and np.linalg.norm(g) < gtol),
        "not_critical": bool(gz > CNN_EXPOSED_TOL),
    }


# ----------------------------------------------------------------------------------------------
# E6: sparsity bias of gradient descent from small initialisation (qualitative)
# ----------------------------------------------------------------------------------------------

def gd_train(arch, theta0, X, Y, c, lr: float = 0.05, n_steps: int = 2000, clip: float = 1e6) -> dict:
    """Plain full-batch gradient descent theta <- theta - lr grad L (MSE).  Stops early (diverged=True)
    if the loss is not finite or exceeds ``clip``.  Returns theta, loss, n_steps_done, diverged."""
    arch = as_arch(arch)
    th = np.array(theta0, float, copy=True)
    loss = math.inf
    with np.errstate(all="ignore"):
        for t in range(int(n_steps)):
            loss, g = mse_loss_and_grad(arch, th, X, Y, c)
            if not np.isfinite(loss) or loss > clip:
                return {"theta": th, "loss": float(loss), "n_steps_done": t, "diverged": True}
            th = th - lr * g
        loss = mse_loss_and_grad(arch, th, X, Y, c)[0]
    return {"theta": th, "loss": float(loss), "n_steps_done": int(n_steps),
            "diverged": not np.isfinite(loss)}


def sparsity_bias_trial(arch, c, X, teacher, seed: int = 0, init_scale: float = 1e-2, lr: float = 0.05,
                        n_steps: int = 2000, rel_tol: float = 1e-2, Y=None) -> dict:
    """E6: GD from a small initialisation on data Y = f_teacher(X) (or on ``Y`` if given, e.g. the
    outputs of a wider, non-realisable teacher), then look for sparse subnetworks.

    MLP: neuron j of hidden layer l has size ||w_in,j|| * ||w_out,j||; it is near-dead if its size is
    < rel_tol * the largest in its layer.  CNN: a boundary filter entry (first / last of any filter) is
    near-zero if |w_{l,b}| < rel_tol * ||w_l||_inf.  Returns loss, diverged, sparse (any near-dead
    neuron / near-zero boundary entry), min_rel (the smallest relative size), n_sparse.  Diverged runs
    (polynomial nets blow up for too large lr) should be excluded when counting."""
    arch = as_arch(arch)
    rng = np.random.default_rng(seed)
    Y = forward(arch, teacher, X, c) if Y is None else np.asarray(Y, float)
    res = gd_train(arch, init_params(arch, rng, init_scale), X, Y, c, lr, n_steps)
    th = res["theta"]
    rels = []
    if arch.kind == "mlp":
        Ws = _mats(arch, th)
        for l in range(1, arch.n_layers):
            size = np.linalg.norm(Ws[l - 1], axis=1) * np.linalg.norm(Ws[l], axis=0)
            rels.extend(size / max(float(size.max()), 1e-300))
    else:
        for l in range(arch.n_layers):
            w = th[arch.layer_slice(l)]
            if w.size > 1:
                m = max(float(np.max(np.abs(w))), 1e-300)
                rels.extend([abs(w[0]) / m, abs(w[-1]) / m])
    rels = np.asarray(rels, float)
    ok = np.isfinite(rels)
    return {
        "loss": res["loss"],
        "diverged": res["diverged"],
        "min_rel": float(rels[ok].min()) if ok.any() else math.nan,
        "n_sparse": int(np.sum(rels[ok] < rel_tol)),
        "sparse": bool(np.any(rels[ok] < rel_tol)),
    }
