"""E1/E2: the dimension of the neuromanifold (C1 MLP dim = #params, C2 monomial contrast, C3 CNN dim = sum k):
the generic rank of the Jacobian, numerically and certified by an exact rank mod p.

Shahverdi, Marchetti, Kohn, "Learning on a Razor's Edge" (ICLR 2026, arXiv 2505.11846); spec
``shared/papers/neuromanifolds.md`` sections 6.2-6.4. Pure functions, no I/O, no printing; randomness only from
the seeds / Generators passed in. The network engine (architectures, forward-mode Jacobians in float / F_p / Q,
ranks, closed forms) is ``nets``.

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
"""

from __future__ import annotations


import numpy as np

from .nets import (MERSENNE_61, RANK_RTOL, activation_coeffs, ambient_dim, as_arch, formula_dim, jacobian,
                   jacobian_mod_p, numerical_rank, rank_mod_p)
from .points import cnn_zero_padded_params, init_params, is_monomial, sample_inputs


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
