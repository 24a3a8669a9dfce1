"""E5 and E6: the MSE loss, its critical points (C5: a sub-network's critical point exposed in the full network)
and gradient descent from small initialisation (C6: its sparsity bias, qualitative).

Shahverdi, Marchetti, Kohn, "Learning on a Razor's Edge" (ICLR 2026, arXiv 2505.11846); spec
``shared/papers/neuromanifolds.md`` sections 6.2-6.4. Pure functions, no I/O, no printing; randomness only from
the seeds / Generators passed in. The network engine (architectures, forward-mode Jacobians in float / F_p / Q,
ranks, closed forms) is ``nets``.

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

import numpy as np

from .nets import as_arch, cnn_arch, forward, forward_and_jacobian, mlp_arch
from .identifiability import _lm_solve
from .points import _mats, init_params
from .points import cnn_shift_mask, cnn_shift_vectors
from .singular import _neuron_index, embed_dead_neuron


CRIT_GTOL = 1e-8        # spec C5: a sub-network fit counts as a critical point if ||grad L_sub||_2 < 1e-8
DEAD_GRAD_TOL = 1e-12   # spec C5: dead-neuron gradient components "exactly 0"
CNN_EXPOSED_TOL = 1e-4  # spec C5: |dL/dw_0| > 1e-4 means "not critical"
MAX_PARAM = 1e3         # a fit whose weights exceed this drifts to a critical point at infinity: not converged

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
