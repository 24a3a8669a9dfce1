"""Core algorithms for ``fairness_pareto`` (Chai, Lu, et al., ICLR 2026, "Rethinking Pareto Frontier:
optimal trade-offs in fair classification"; official code github.com/cjy24/Pareto-frontier, not read).

Notation (spec section 4.2, binary label Y, binary group A):
    alpha_a = P(Y=1 | A=a),  beta = P(A=1),
    confusion vector  z = [TPR_0, TNR_0, TPR_1, TNR_1]^T,
    Acc(z)  = A_c z,   A_c = [alpha_0(1-beta), (1-alpha_0)(1-beta), alpha_1 beta, (1-alpha_1) beta],
    Acc_a(z) = A_c^a z (group accuracy: alpha_a TPR_a + (1-alpha_a) TNR_a),
    DP(z)   = |A_DP z + A'_DP (1 - z)|,  A_DP = [alpha_0, 0, -alpha_1, 0], A'_DP = [0, 1-alpha_0, 0, -(1-alpha_1)],
    EOd(z)  = ||A_EOd z||_1,  A_EOd = [[1, 0, -1, 0], [0, 1, 0, -1]]   (sum of TPR and TNR gaps),
    EOp(z)  = |TPR_0 - TPR_1|                                          (equal opportunity, added here).

This module holds what needs numpy only: group statistics, the linear forms, test metrics, group ROC points, the
score binning, the last-layer retraining (torch, imported by that one function), G-STAR, DFR and the
accuracy-at-a-fairness-level rule. The frontiers themselves are LPs in :mod:`.lp` (cvxpy); the raw-data parsers are
in :mod:`.data`. Pure functions, no file I/O, deterministic given seeds. Callers should run torch with one thread.
"""

from __future__ import annotations

import numpy as np

NOTIONS = ("dp", "eod", "eop")

__all__ = [
    "NOTIONS", "group_stats", "confusion_vector", "fairness_matrices", "fairness_metrics", "fairness_of_z",
    "score_bins_joint", "roc_points", "roc_with_base", "dp_drop_condition", "retrain_head_group_bias",
    "predict_group_bias", "gstar_thresholds", "acc_at_level", "dfr_balanced_indices", "shuffled_group_cell",
]

# ----------------------------------------------------------------------------------------------- basics
def group_stats(y, group) -> dict:
    """``{"alpha0", "alpha1", "beta"}`` with alpha_a = P(Y=1|A=a), beta = P(A=1) (empirical)."""
    y = np.asarray(y).astype(int)
    g = np.asarray(group).astype(int)
    return {"alpha0": float(y[g == 0].mean()), "alpha1": float(y[g == 1].mean()), "beta": float(g.mean())}


def confusion_vector(y, yhat, group) -> np.ndarray:
    """z = [TPR_0, TNR_0, TPR_1, TNR_1] of hard (or probabilistic, in [0,1]) predictions ``yhat``."""
    y = np.asarray(y).astype(int)
    p = np.asarray(yhat, dtype=float)
    g = np.asarray(group).astype(int)
    out = []
    for a in (0, 1):
        m1, m0 = (g == a) & (y == 1), (g == a) & (y == 0)
        out += [p[m1].mean() if m1.any() else 0.0, (1 - p[m0]).mean() if m0.any() else 0.0]
    return np.array(out)


def fairness_matrices(alpha0: float, alpha1: float, beta: float) -> dict:
    """Matrices of the spec's claim 1: keys ``A_c, A_c0, A_c1, A_DP, A_DPp, A_EOd, A_EOp``
    (``A_c^a`` is the group-a accuracy row, ``A_DPp`` is A'_DP)."""
    a0, a1, b = float(alpha0), float(alpha1), float(beta)
    return {
        "A_c": np.array([a0 * (1 - b), (1 - a0) * (1 - b), a1 * b, (1 - a1) * b]),
        "A_c0": np.array([a0, 1 - a0, 0.0, 0.0]),
        "A_c1": np.array([0.0, 0.0, a1, 1 - a1]),
        "A_DP": np.array([a0, 0.0, -a1, 0.0]),
        "A_DPp": np.array([0.0, 1 - a0, 0.0, -(1 - a1)]),
        "A_EOd": np.array([[1.0, 0, -1, 0], [0, 1, 0, -1]]),
        "A_EOp": np.array([1.0, 0, -1, 0]),
    }


def fairness_of_z(z, alpha0, alpha1, beta) -> dict:
    """``{"acc", "dp", "eod", "eop", "acc0", "acc1"}`` of a confusion vector via the linear forms."""
    M = fairness_matrices(alpha0, alpha1, beta)
    z = np.asarray(z, dtype=float)
    return {"acc": float(M["A_c"] @ z), "dp": float(abs(M["A_DP"] @ z + M["A_DPp"] @ (1 - z))),
            "eod": float(np.abs(M["A_EOd"] @ z).sum()), "eop": float(abs(M["A_EOp"] @ z)),
            "acc0": float(M["A_c0"] @ z), "acc1": float(M["A_c1"] @ z)}


def fairness_metrics(y, yhat, group) -> dict:
    """Test metrics: ``{"acc", "dp", "eod", "eop", "z"}``; DP = |PR_0 - PR_1|, EOd = |dTPR| + |dTNR|."""
    y = np.asarray(y).astype(int)
    p = np.asarray(yhat, dtype=float)
    g = np.asarray(group).astype(int)
    z = confusion_vector(y, p, g)
    acc = float((p * y + (1 - p) * (1 - y)).mean())
    dp = float(abs(p[g == 0].mean() - p[g == 1].mean()))
    return {"acc": acc, "dp": dp, "eod": float(abs(z[0] - z[2]) + abs(z[1] - z[3])),
            "eop": float(abs(z[0] - z[2])), "z": z}


# ------------------------------------------------------------------ scores: binning and group ROC points
def score_bins_joint(score, y, group, edges) -> np.ndarray:
    """Joint p[a, k, y] = P(A=a, S in bin k, Y=y) of a base model's scores binned by ``edges``."""
    s, y, g = np.asarray(score, float), np.asarray(y).astype(int), np.asarray(group).astype(int)
    k = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, len(edges) - 2)
    p = np.zeros((2, len(edges) - 1, 2))
    np.add.at(p, (g, k, y), 1.0)
    return p / p.sum()


def roc_points(score, y, group, n_thresholds=101) -> list:
    """Per-group ROC points [(TPR_a(tau), TNR_a(tau))] for tau on score quantiles (plus the two trivial ones)."""
    s, y, g = np.asarray(score, float), np.asarray(y).astype(int), np.asarray(group).astype(int)
    out = []
    for a in (0, 1):
        sa, ya = s[g == a], y[g == a]
        taus = np.unique(np.r_[-np.inf, np.quantile(sa, np.linspace(0, 1, n_thresholds)), np.inf])
        pts = [((sa[ya == 1] >= t).mean(), (sa[ya == 0] < t).mean()) for t in taus]
        out.append(np.unique(np.array(pts), axis=0))
    return out


def roc_with_base(logit, y, g, z_b, n_thresholds: int) -> list:
    """Group ROC points of the base score, with z_b's own group points added (its 0 threshold may fall between)."""
    roc = roc_points(logit, y, g, n_thresholds)
    return [np.unique(np.vstack([roc[a], [[z_b[2 * a], z_b[2 * a + 1]]]]), axis=0) for a in (0, 1)]


# ------------------------------------------------------------------------------------- claim C3's condition
def dp_drop_condition(err0, err1, alpha0, alpha1) -> bool:
    """Zhao-Gordon-type condition of spec C3: the DP frontier (caps = z_b's group accuracies) drops below the
    vanilla accuracy at eps=0 iff err_0 + err_1 < |alpha_0 - alpha_1| (PR_a ranges over
    [|alpha_a - err_a|, alpha_a + err_a] on the iso-accuracy segment)."""
    return bool(err0 + err1 < abs(alpha0 - alpha1))


# --------------------------------------------------------- last-layer retraining (ours), G-STAR, DFR
def retrain_head_group_bias(H, y, group, lam=1.0, notion="eod", w_init=None, b_init=0.0, tau=0.1,
                            epochs=200, lr=1e-2, seed=0, group_bias=True) -> dict:
    """Retrain the linear head h_2 on x_hat = [h_1(g(x)), 1[a=0], 1[a=1]] with parameters [w, b_0, b_1]:

        min  BCE(w^T h + b_a, y) + lam * R(w, b),
        R_EOd = |sTPR_0 - sTPR_1| + |sTNR_0 - sTNR_1|,   R_DP = |sPR_0 - sPR_1|,
    soft rates = group means of sigmoid(logit / tau) (surrogate of Acc - lam * fairness; [reconstructed]).
    Full-batch Adam, initialised at (w*, b*, b*). ``group_bias=False`` ties b_0 = b_1 (one shared bias: the
    paper's mechanism removed, the control of claim C4). Returns ``{"w", "b0", "b1", "loss"}`` (numpy)."""
    import torch
    torch.manual_seed(seed)
    Ht = torch.as_tensor(np.asarray(H, float), dtype=torch.float64)
    yt = torch.as_tensor(np.asarray(y, float), dtype=torch.float64)
    g = np.asarray(group).astype(int)
    w = torch.zeros(Ht.shape[1], dtype=torch.float64) if w_init is None else \
        torch.as_tensor(np.asarray(w_init, float), dtype=torch.float64).clone()
    w.requires_grad_(True)
    b = torch.full((2 if group_bias else 1,), float(b_init), dtype=torch.float64, requires_grad=True)
    gt = torch.as_tensor(g)
    bias_index = gt if group_bias else torch.zeros_like(gt)   # tied: every row reads the one shared bias
    masks = {(a, c): (gt == a) & (yt == c) for a in (0, 1) for c in (0, 1)}
    opt = torch.optim.Adam([w, b], lr=lr)
    bce = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        opt.zero_grad()
        logit = Ht @ w + b[bias_index]
        s = torch.sigmoid(logit / tau)
        if notion == "eod":
            reg = (s[masks[0, 1]].mean() - s[masks[1, 1]].mean()).abs() + \
                  ((1 - s[masks[0, 0]]).mean() - (1 - s[masks[1, 0]]).mean()).abs()
        elif notion == "dp":
            reg = (s[gt == 0].mean() - s[gt == 1].mean()).abs()
        elif notion == "eop":
            reg = (s[masks[0, 1]].mean() - s[masks[1, 1]].mean()).abs()
        else:
            raise ValueError(notion)
        loss = bce(logit, yt) + lam * reg
        loss.backward()
        opt.step()
    return {"w": w.detach().numpy().copy(), "b0": float(b[0].detach()), "b1": float(b[-1].detach()), "loss": float(loss.detach())}


def predict_group_bias(H, group, head) -> np.ndarray:
    """Hard predictions 1[w^T h + b_a > 0] of a head from :func:`retrain_head_group_bias`."""
    g = np.asarray(group).astype(int)
    logit = np.asarray(H, float) @ head["w"] + np.where(g == 1, head["b1"], head["b0"])
    return (logit > 0).astype(int)


def gstar_thresholds(score, y, group, lam=1.0, notion="eod", grid=None) -> dict:
    """G-STAR ablation (w = w* fixed): grid-search group thresholds (c_0, c_1), yhat = 1[s >= c_a], maximising
    Acc - lam * fairness on the given (validation) data; the first maximiser in (c_0, c_1) row-major order wins.
    Vectorised: per group and threshold the counts TP_a(c), TN_a(c); every pair combines them.
    Returns ``{"c0", "c1", "objective"}``."""
    s, y, g = np.asarray(score, float), np.asarray(y).astype(int), np.asarray(group).astype(int)
    grid = np.quantile(s, np.linspace(0, 1, 51)) if grid is None else np.asarray(grid, float)
    n = len(y)
    rates = []
    for a in (0, 1):
        sa, ya = s[g == a], y[g == a]
        pred = sa[None, :] >= grid[:, None]                           # (thresholds, n_a)
        tp, fp = (pred & (ya == 1)).sum(1), (pred & (ya == 0)).sum(1)
        n1, n0 = max((ya == 1).sum(), 1), max((ya == 0).sum(), 1)
        rates.append({"tpr": tp / n1, "tnr": 1 - fp / n0, "pr": (tp + fp) / max(len(ya), 1),
                      "correct": tp + ((ya == 0).sum() - fp)})
    r0, r1 = rates
    acc = (r0["correct"][:, None] + r1["correct"][None, :]) / n
    if notion == "eod":
        fair = np.abs(r0["tpr"][:, None] - r1["tpr"][None, :]) + np.abs(r0["tnr"][:, None] - r1["tnr"][None, :])
    elif notion == "dp":
        fair = np.abs(r0["pr"][:, None] - r1["pr"][None, :])
    elif notion == "eop":
        fair = np.abs(r0["tpr"][:, None] - r1["tpr"][None, :])
    else:
        raise ValueError(f"notion must be one of {NOTIONS}")
    obj = acc - lam * fair
    i, j = np.unravel_index(int(np.argmax(obj)), obj.shape)
    return {"c0": float(grid[i]), "c1": float(grid[j]), "objective": float(obj[i, j])}


def acc_at_level(acc, fair, level: float, const_acc: float) -> float:
    """Best accuracy a method's points reach at fairness <= ``level`` (EOd or DP), each point randomised with the
    majority-class constant predictor (fairness 0, accuracy ``const_acc``) just enough to meet the level.

    Mixing a classifier z with a constant one (A_EOd z_c = 0, DP(z_c) = 0) with weight w gives fairness w * e and
    accuracy c + w (a - c); so a point (a, e) reaches c + (a - c) min(1, level / e) at the level, and the constant
    predictor itself is always available. The value is continuous in each point's e: a point just above or
    just below the level changes it by float noise only (a hard cut-off made a verdict flip between machines)."""
    a, e = np.asarray(acc, float), np.asarray(fair, float)
    if a.size == 0:
        return float(const_acc)
    w = np.where(e <= level, 1.0, level / np.maximum(e, 1e-300))
    return float(max(const_acc, np.max(const_acc + (a - const_acc) * w)))


def dfr_balanced_indices(y, group, seed=0) -> np.ndarray:
    """DFR-style group-and-class-balanced subset: min_{a,y} n_{a,y} rows from each (a, y) cell (seeded)."""
    y, g = np.asarray(y).astype(int), np.asarray(group).astype(int)
    rng = np.random.default_rng(seed)
    cells = [np.flatnonzero((g == a) & (y == c)) for a in (0, 1) for c in (0, 1)]
    n = min(len(c) for c in cells)
    return np.sort(np.concatenate([rng.choice(c, n, replace=False) for c in cells]))


def shuffled_group_cell(logit, y, g, seed: int) -> tuple[dict, np.ndarray]:
    """The control's cell: the group attribute of the test rows permuted (seeded); marginals, z_b and the caps (the
    model's own group accuracies) recomputed under it. Returns (summary-like dict, permuted groups)."""
    gs = np.random.default_rng(seed).permutation(np.asarray(g).astype(int))
    pred = (np.asarray(logit) > 0).astype(int)
    z_b = confusion_vector(y, pred, gs)
    stats = group_stats(y, gs)
    caps = [float((y[gs == a] == pred[gs == a]).mean()) for a in (0, 1)]
    return {**stats, "z_b": z_b.tolist(), "caps": caps, "acc_b": float((pred == y).mean())}, gs
