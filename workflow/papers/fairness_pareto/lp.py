"""The frontiers of ``fairness_pareto`` as linear programs over the confusion vector (cvxpy; HiGHS, falling back to
CLARABEL). Notation and the linear forms: :mod:`.methods`.

Model-specific (MS) Pareto frontier:  F(eps) = max_{z in K} A_c z  s.t.  fairness(z) <= eps,
    K = {0 <= z <= 1;  A_c z <= A_c z_b;  A_c^a z <= A_c^a z_b^a (a = 0, 1)}.
Also: the post-processing frontier of a binned score, FACT and FACT + G-STAR, the fairness-fairness trade-off and
Lemma 2. Pure functions, deterministic.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .methods import NOTIONS, fairness_matrices, fairness_of_z

__all__ = ["ms_frontier", "ms_frontier_curve", "score_frontier", "fact_frontier", "fact_gstar_frontier",
           "fairness_fairness_frontier", "lemma2_accuracy"]


def _fair_expr(z, M, notion):
    if notion == "dp":
        return cp.abs(M["A_DP"] @ z + M["A_DPp"] @ (1 - z))
    if notion == "eod":
        return cp.norm1(M["A_EOd"] @ z)
    if notion == "eop":
        return cp.abs(M["A_EOp"] @ z)
    raise ValueError(f"notion must be one of {NOTIONS}")


def _solve(prob):
    for s in ("HIGHS", "CLARABEL"):
        try:
            prob.solve(solver=s)
            if prob.status in ("optimal", "optimal_inaccurate"):
                return prob.status
        except (cp.SolverError, Exception):  # noqa: BLE001 - try the next solver
            continue
    return prob.status


# ------------------------------------------------------------------------------------ MS frontier (ours)
def ms_frontier(alpha0, alpha1, beta, eps, notion="eod", z_b=None, zb_groups=None) -> dict:
    """Model-specific Pareto frontier point (spec claim 1):

        F(eps) = max_z A_c z  s.t.  0 <= z <= 1,  A_c z <= A_c z_b,  A_c^a z <= acc_a^cap (a=0,1),
                                     fairness(z) <= eps.

    ``z_b``: vanilla model's confusion vector (None drops the overall cap); ``zb_groups``: the caps
    ``(acc_0^cap, acc_1^cap)`` = A_c^a z_b^a (None -> the group accuracies of ``z_b``; ``False`` -> no group
    caps). Returns ``{"acc", "z", "fair", "status"}``."""
    M = fairness_matrices(alpha0, alpha1, beta)
    z = cp.Variable(4)
    cons = [z >= 0, z <= 1, _fair_expr(z, M, notion) <= eps]
    if z_b is not None:
        zb = np.asarray(z_b, dtype=float)
        cons.append(M["A_c"] @ z <= M["A_c"] @ zb)
        if zb_groups is None:
            zb_groups = (M["A_c0"] @ zb, M["A_c1"] @ zb)
    if zb_groups is not None and zb_groups is not False:
        cons += [M["A_c0"] @ z <= zb_groups[0], M["A_c1"] @ z <= zb_groups[1]]
    prob = cp.Problem(cp.Maximize(M["A_c"] @ z), cons)
    st = _solve(prob)
    zv = np.clip(np.asarray(z.value, dtype=float), 0, 1) if z.value is not None else np.full(4, np.nan)
    return {"acc": float(prob.value), "z": zv, "fair": fairness_of_z(zv, alpha0, alpha1, beta)[notion],
            "status": st}


def ms_frontier_curve(alpha0, alpha1, beta, eps_grid, notion="eod", z_b=None, zb_groups=None) -> dict:
    """F(eps) on a grid: ``{"eps": array, "acc": array}``."""
    eps = np.asarray(eps_grid, dtype=float)
    acc = np.array([ms_frontier(alpha0, alpha1, beta, e, notion, z_b, zb_groups)["acc"] for e in eps])
    return {"eps": eps, "acc": acc}


# ------------------------------------------------------------------ score-based frontier (given scores)
def score_frontier(p, eps, notion="eod") -> dict:
    """Frontier over *all* randomised group-aware post-processings of a binned score.

    ``p[a, k, y] = P(A=a, S=k, Y=y)``; decision rule t[a, k] = P(Yhat=1 | A=a, S=k) in [0, 1]. Then
    TPR_a = sum_k t_ak p[a,k,1] / P(A=a,Y=1), TNR_a = 1 - sum_k t_ak p[a,k,0] / P(A=a,Y=0),
    Acc = sum_{a,k} t_ak p[a,k,1] + (1 - t_ak) p[a,k,0] and the LP
        max_t Acc  s.t.  fairness(z(t)) <= eps,  0 <= t <= 1.
    At eps >= 1 (no constraint) it returns the Bayes accuracy sum_{a,k} max(p[a,k,0], p[a,k,1]).
    Returns ``{"acc", "t", "z", "fair", "status"}``."""
    p = np.asarray(p, dtype=float)
    py = p.sum(axis=1)                       # (2, 2): P(A=a, Y=y)
    pa = py.sum(axis=1)
    alpha = py[:, 1] / pa
    beta = pa[1]
    M = fairness_matrices(alpha[0], alpha[1], beta)
    t = cp.Variable(p.shape[:2])
    rows = []
    for a in (0, 1):
        rows += [p[a, :, 1] @ t[a] / py[a, 1], 1 - p[a, :, 0] @ t[a] / py[a, 0]]
    z = cp.hstack(rows)
    acc = cp.sum(cp.multiply(t, p[:, :, 1])) + cp.sum(cp.multiply(1 - t, p[:, :, 0]))
    prob = cp.Problem(cp.Maximize(acc), [t >= 0, t <= 1, _fair_expr(z, M, notion) <= eps])
    st = _solve(prob)
    tv = np.clip(np.asarray(t.value, float), 0, 1)
    zv = np.array([(p[a, :, 1] @ tv[a]) / py[a, 1] if j == 0 else 1 - (p[a, :, 0] @ tv[a]) / py[a, 0]
                   for a in (0, 1) for j in (0, 1)])
    return {"acc": float(prob.value), "t": tv, "z": zv,
            "fair": fairness_of_z(zv, alpha[0], alpha[1], beta)[notion], "status": st}


# --------------------------------------------------------------------------------- baseline frontiers
def fact_frontier(alpha0, alpha1, beta, eps, z_b, notion="eod") -> dict:
    """FACT (Kim et al. 2020) randomised flipping of the base classifier z_b:
        TPR'_a = TPR_a (1 - p_a) + (1 - TPR_a) q_a,   TNR'_a = TNR_a (1 - q_a) + (1 - TNR_a) p_a,
    p_a (flip 1->0), q_a (flip 0->1) in [0, 1] (linear); max A_c z' s.t. fairness(z') <= eps.
    Returns ``{"acc", "z", "pq", "status"}``."""
    M = fairness_matrices(alpha0, alpha1, beta)
    zb = np.asarray(z_b, float)
    pq = cp.Variable(4)                      # p0, q0, p1, q1
    rows = []
    for a in (0, 1):
        tpr, tnr, pa, qa = zb[2 * a], zb[2 * a + 1], pq[2 * a], pq[2 * a + 1]
        rows += [tpr * (1 - pa) + (1 - tpr) * qa, tnr * (1 - qa) + (1 - tnr) * pa]
    z = cp.hstack(rows)
    prob = cp.Problem(cp.Maximize(M["A_c"] @ z), [pq >= 0, pq <= 1, _fair_expr(z, M, notion) <= eps])
    st = _solve(prob)
    return {"acc": float(prob.value), "z": np.asarray(z.value, float), "pq": np.asarray(pq.value, float),
            "status": st}


def fact_gstar_frontier(alpha0, alpha1, beta, eps, roc, notion="eod") -> dict:
    """FACT + G-STAR: z_a ranges over conv( ROC_a  U  flipped ROC_a ), flipped (1 - TPR, 1 - TNR), via
    simplex weights lambda_a: z_a = V_a^T lambda_a, lambda_a >= 0, 1^T lambda_a = 1. ``roc``: output of
    :func:`.methods.roc_points` (or ``roc_with_base``). Returns ``{"acc", "z", "status"}``."""
    M = fairness_matrices(alpha0, alpha1, beta)
    rows, cons = [], []
    for a in (0, 1):
        V = np.vstack([roc[a], 1 - roc[a]])
        lam = cp.Variable(len(V))
        cons += [lam >= 0, cp.sum(lam) == 1]
        rows += [V[:, 0] @ lam, V[:, 1] @ lam]
    z = cp.hstack(rows)
    prob = cp.Problem(cp.Maximize(M["A_c"] @ z), cons + [_fair_expr(z, M, notion) <= eps])
    st = _solve(prob)
    return {"acc": float(prob.value), "z": np.asarray(z.value, float), "status": st}


# ------------------------------------------------------------------ fairness-fairness and Lemma 2
def fairness_fairness_frontier(alpha0, alpha1, beta, eps, eta, z_b=None, zb_groups=None) -> dict:
    """min_z DP(z)  s.t.  EOd(z) <= eps,  A_c z >= eta,  z in K (K as in :func:`ms_frontier`).
    Returns ``{"dp", "z", "status"}`` (dp = inf when infeasible)."""
    M = fairness_matrices(alpha0, alpha1, beta)
    z = cp.Variable(4)
    cons = [z >= 0, z <= 1, _fair_expr(z, M, "eod") <= eps, M["A_c"] @ z >= eta]
    if z_b is not None:
        zb = np.asarray(z_b, float)
        cons.append(M["A_c"] @ z <= M["A_c"] @ zb)
        if zb_groups is None:
            zb_groups = (M["A_c0"] @ zb, M["A_c1"] @ zb)
    if zb_groups is not None and zb_groups is not False:
        cons += [M["A_c0"] @ z <= zb_groups[0], M["A_c1"] @ z <= zb_groups[1]]
    prob = cp.Problem(cp.Minimize(_fair_expr(z, M, "dp")), cons)
    st = _solve(prob)
    dp = float(prob.value) if st in ("optimal", "optimal_inaccurate") else float("inf")
    return {"dp": dp, "z": None if z.value is None else np.asarray(z.value, float), "status": st}


def lemma2_accuracy(alpha0, alpha1, beta, with_eod=True) -> dict:
    """Lemma 2 LP: max A_c z s.t. DP(z) = 0, EOd(z) = 0, 0 <= z <= 1 (no K caps). If alpha_0 != alpha_1
    the optimum equals the constant-predictor accuracy max(P(Y=1), P(Y=0)).
    ``with_eod=False`` drops the EOd = 0 constraint: a deliberately wrong LP (DP alone allows more than the
    constant predictor), the control that the Lemma 2 check must catch.
    Returns ``{"acc", "const_acc", "z"}``."""
    M = fairness_matrices(alpha0, alpha1, beta)
    z = cp.Variable(4)
    cons = [z >= 0, z <= 1, M["A_DP"] @ z + M["A_DPp"] @ (1 - z) == 0] + ([M["A_EOd"] @ z == 0] if with_eod else [])
    prob = cp.Problem(cp.Maximize(M["A_c"] @ z), cons)
    _solve(prob)
    py1 = alpha0 * (1 - beta) + alpha1 * beta
    return {"acc": float(prob.value), "const_acc": float(max(py1, 1 - py1)), "z": np.asarray(z.value, float)}
