"""Tests for the ``fairness_pareto`` core algorithms (workflow/papers/fairness_pareto). Tiny LPs, one thread."""

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from workflow.papers.fairness_pareto import data, lp
from workflow.papers.fairness_pareto import methods as M

torch.set_num_threads(1)

# three score bins per group: p[a, k, y] = P(A=a, S=k, Y=y) (sums to 1); alpha_0 != alpha_1
P = np.array([[[0.20, 0.02], [0.06, 0.05], [0.02, 0.10]],
              [[0.10, 0.01], [0.05, 0.09], [0.03, 0.27]]])
P = P / P.sum()


def _linear_system(p, notion, eps):
    """Independent construction: z = C t + d over t = vec(t[a, k]); Acc = c^T t + c0; fairness as G t <= h."""
    K = p.shape[1]
    py = p.sum(axis=1)
    n = 2 * K
    C, d = np.zeros((4, n)), np.array([0.0, 1.0, 0.0, 1.0])
    for a in (0, 1):
        C[2 * a, a * K:(a + 1) * K] = p[a, :, 1] / py[a, 1]
        C[2 * a + 1, a * K:(a + 1) * K] = -p[a, :, 0] / py[a, 0]
    c = (p[:, :, 1] - p[:, :, 0]).ravel()
    c0 = p[:, :, 0].sum()
    pa = py.sum(axis=1)
    pr = np.zeros(n)
    pr[:K] = p[0].sum(axis=1) / pa[0]
    pr[K:] = -p[1].sum(axis=1) / pa[1]
    u, v = C[0] - C[2], C[1] - C[3]
    if notion == "dp":
        G = np.vstack([pr, -pr]); h = np.array([eps, eps])
    elif notion == "eop":
        G = np.vstack([u, -u]); h = np.array([eps, eps])
    else:  # |u| + |v| <= eps (d cancels in the differences)
        G = np.vstack([u + v, u - v, -u + v, -u - v]); h = np.full(4, eps)
    return C, d, c, c0, G, h


def _enumerate_best(p, notion, eps, tol=1e-9):
    """Brute-force vertex enumeration of max Acc over randomised rules t in [0,1]^n with G t <= h: at a
    vertex at most rank(G_active) <= 2 coordinates are fractional; the rest are deterministic (0/1)."""
    _, _, c, c0, G, h = _linear_system(p, notion, eps)
    n = len(c)
    best = -np.inf
    for nf in (0, 1, 2):
        for F in itertools.combinations(range(n), nf):
            rest = [i for i in range(n) if i not in F]
            for bits in itertools.product((0.0, 1.0), repeat=len(rest)):
                t = np.zeros(n)
                t[rest] = bits
                hr = h - G[:, rest] @ np.array(bits)
                # lines in the free coordinates: G_F x = hr, x_j = 0, x_j = 1
                lines = [(G[i, list(F)], hr[i]) for i in range(len(h))]
                for j in range(nf):
                    e = np.zeros(nf); e[j] = 1.0
                    lines += [(e, 0.0), (e, 1.0)]
                cands = []
                if nf == 0:
                    cands = [np.zeros(0)]
                else:
                    for combo in itertools.combinations(lines, nf):
                        A = np.array([r for r, _ in combo]); b = np.array([s for _, s in combo])
                        if abs(np.linalg.det(A)) < 1e-12:
                            continue
                        cands.append(np.linalg.solve(A, b))
                for x in cands:
                    if (x < -tol).any() or (x > 1 + tol).any():
                        continue
                    t[list(F)] = x
                    if (G @ t <= h + 1e-9).all():
                        best = max(best, c @ t + c0)
    return best


@pytest.mark.parametrize("notion", ["dp", "eod", "eop"])
def test_score_frontier_matches_enumeration(notion):
    for eps in (0.0, 0.04, 0.15, 1.0):
        value = lp.score_frontier(P, eps, notion)["acc"]
        assert value == pytest.approx(_enumerate_best(P, notion, eps), abs=1e-6), (notion, eps)


def test_unconstrained_end_is_bayes_accuracy():
    bayes = np.maximum(P[..., 0], P[..., 1]).sum()
    for notion in M.NOTIONS:
        r = lp.score_frontier(P, 2.0, notion)
        assert r["acc"] == pytest.approx(bayes, abs=1e-7)
    # and the Bayes rule is strictly unfair here, so the constraint binds at eps = 0
    assert lp.score_frontier(P, 0.0, "dp")["acc"] < bayes - 1e-3


@pytest.mark.parametrize("notion", ["dp", "eod", "eop"])
def test_fully_fair_end_exact(notion):
    r = lp.score_frontier(P, 0.0, notion)
    C, d, c, c0, G, h = _linear_system(P, notion, 0.0)
    t = r["t"].ravel()
    assert np.abs(G @ t).max() < 1e-7          # independent check of the constraint
    assert r["fair"] < 1e-7
    zb = np.array([0.8, 0.85, 0.7, 0.9])
    s = lp.ms_frontier(0.2, 0.45, 0.6, 0.0, notion, z_b=zb)
    assert s["fair"] < 1e-7


@pytest.mark.parametrize("notion", ["dp", "eod", "eop"])
def test_frontiers_monotone_and_ordered(notion):
    grid = np.linspace(0, 0.4, 9)
    sc = np.array([lp.score_frontier(P, e, notion)["acc"] for e in grid])
    assert (np.diff(sc) >= -1e-8).all()
    zb = np.array([0.75, 0.9, 0.6, 0.8])
    a0, a1, b = 0.2, 0.45, 0.6
    ours = lp.ms_frontier_curve(a0, a1, b, grid, notion, z_b=zb)["acc"]
    assert (np.diff(ours) >= -1e-8).all()
    fact = np.array([lp.fact_frontier(a0, a1, b, e, zb, notion)["acc"] for e in grid])
    assert (ours >= fact - 1e-7).all()            # Lemma 1 (weak form): FACT's set is inside K
    acc_b = M.fairness_matrices(a0, a1, b)["A_c"] @ zb
    assert ours[-1] <= acc_b + 1e-8 and lp.ms_frontier(a0, a1, b, 1.0, notion, z_b=zb)["acc"] == \
        pytest.approx(acc_b, abs=1e-7)           # unconstrained end = the vanilla model's accuracy cap


def test_linear_forms_match_counts():
    rng = np.random.default_rng(0)
    g = rng.integers(0, 2, 500); y = rng.integers(0, 2, 500); yhat = rng.integers(0, 2, 500)
    st = M.group_stats(y, g)
    m = M.fairness_metrics(y, yhat, g)
    f = M.fairness_of_z(m["z"], st["alpha0"], st["alpha1"], st["beta"])
    for k in ("acc", "dp", "eod", "eop"):
        assert f[k] == pytest.approx(m[k], abs=1e-12), k


def test_lemma2_constant_accuracy():
    for a0, a1, b in [(0.109, 0.300, 0.667), (0.39, 0.52, 0.60), (0.7, 0.2, 0.3)]:
        r = lp.lemma2_accuracy(a0, a1, b)
        assert r["acc"] == pytest.approx(r["const_acc"], abs=1e-6)


def test_dp_drop_condition_exact_with_own_group_caps():
    rng = np.random.default_rng(1)
    for _ in range(12):
        a0, a1 = rng.uniform(0.05, 0.95, 2); b = rng.uniform(0.2, 0.8)
        zb = rng.uniform(0.6, 1.0, 4)
        Mx = M.fairness_matrices(a0, a1, b)
        err0, err1 = 1 - Mx["A_c0"] @ zb, 1 - Mx["A_c1"] @ zb
        drop = Mx["A_c"] @ zb - lp.ms_frontier(a0, a1, b, 0.0, "dp", z_b=zb)["acc"]
        if abs(err0 + err1 - abs(a0 - a1)) > 1e-3:
            assert (drop > 1e-7) == M.dp_drop_condition(err0, err1, a0, a1)


def test_fact_gstar_contains_fact():
    rng = np.random.default_rng(2)
    n = 400
    g = rng.integers(0, 2, n); y = (rng.random(n) < np.where(g == 1, 0.5, 0.3)).astype(int)
    s = y + rng.normal(0, 0.8, n)
    st = M.group_stats(y, g)
    roc = M.roc_points(s, y, g, 21)
    zb = M.confusion_vector(y, (s > 0.5).astype(int), g)
    for e in (0.0, 0.1):
        fg = lp.fact_gstar_frontier(st["alpha0"], st["alpha1"], st["beta"], e, roc)["acc"]
        fa = lp.fact_frontier(st["alpha0"], st["alpha1"], st["beta"], e, zb)["acc"]
        assert fg >= fa - 0.02   # thresholds 0.5 lies between ROC grid points: allow grid slack


def test_retrain_head_reduces_eod_and_is_deterministic():
    rng = np.random.default_rng(3)
    n = 600
    g = rng.integers(0, 2, n); y = (rng.random(n) < np.where(g == 1, 0.6, 0.3)).astype(int)
    H = np.c_[y + rng.normal(0, 1, n) + 0.8 * g, rng.normal(0, 1, n)]
    h0 = M.retrain_head_group_bias(H, y, g, lam=0.0, epochs=150, lr=0.05, seed=0)
    h1 = M.retrain_head_group_bias(H, y, g, lam=10.0, epochs=150, lr=0.05, seed=0, w_init=h0["w"],
                                   b_init=h0["b0"])
    h1b = M.retrain_head_group_bias(H, y, g, lam=10.0, epochs=150, lr=0.05, seed=0, w_init=h0["w"],
                                    b_init=h0["b0"])
    e0 = M.fairness_metrics(y, M.predict_group_bias(H, g, h0), g)["eod"]
    e1 = M.fairness_metrics(y, M.predict_group_bias(H, g, h1), g)["eod"]
    assert e1 < e0 - 0.05
    assert np.array_equal(h1["w"], h1b["w"]) and h1["b0"] == h1b["b0"] and h1["b1"] == h1b["b1"]
    gs = M.gstar_thresholds(H[:, 0], y, g, lam=10.0)
    assert gs == M.gstar_thresholds(H[:, 0], y, g, lam=10.0)


def test_frontier_deterministic():
    a = lp.score_frontier(P, 0.05, "eod"); b = lp.score_frontier(P, 0.05, "eod")
    assert a["acc"] == b["acc"] and np.array_equal(a["t"], b["t"])


def test_parse_adult_handles_test_file_quirks():
    row = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, {sex}, 2174, 0, 40, United-States, {lab}"
    text = "|1x3 Cross validator\n" + "\n".join([row.format(sex="Male", lab=">50K."), row.format(sex="Female", lab="<=50K.")]) + "\n"
    X, y, g = data.parse_adult(text)
    assert X.shape == (2, 13) and list(y) == [1, 0] and list(g) == [1, 0]
    X, y, g = data.parse_adult(text, "married")
    assert list(y) == [0, 0] and "marital-status" not in X.columns


def test_dfr_balanced():
    rng = np.random.default_rng(4)
    g = rng.integers(0, 2, 300); y = rng.integers(0, 2, 300)
    idx = M.dfr_balanced_indices(y, g, seed=0)
    cnt = [((g[idx] == a) & (y[idx] == c)).sum() for a in (0, 1) for c in (0, 1)]
    assert len(set(cnt)) == 1 and np.array_equal(idx, M.dfr_balanced_indices(y, g, seed=0))


# ------------------------------------------------ exact vertex enumeration of the 4-variable frontier LPs
def _vertex_max(c, A, b, tol=1e-9):
    """max c^T x s.t. A x <= b over a bounded polytope in R^4, by enumerating every 4-subset of active constraints."""
    best = -np.inf
    for rows in itertools.combinations(range(len(b)), 4):
        Ar, br = A[list(rows)], b[list(rows)]
        if abs(np.linalg.det(Ar)) < 1e-12:
            continue
        x = np.linalg.solve(Ar, br)
        if (A @ x <= b + tol).all():
            best = max(best, float(c @ x))
    return best


def _abs_rows(u, off, eps, notion):
    """|u z + off| <= eps (dp/eop) or |u0 z| + |u1 z| <= eps (eod) as rows of A z <= b."""
    if notion == "eod":
        u0, u1 = u
        rows = [s0 * u0 + s1 * u1 for s0 in (1, -1) for s1 in (1, -1)]
        return np.array(rows), np.full(4, eps)
    return np.array([u, -u]), np.array([eps - off, eps + off])


def _fair_rows(Mx, notion, eps, lin=np.eye(4), const=np.zeros(4)):
    """Fairness rows for z = lin x + const."""
    if notion == "dp":  # A_DP z + A'_DP (1 - z) = (A_DP - A'_DP) z + A'_DP 1
        u = Mx["A_DP"] - Mx["A_DPp"]
        return _abs_rows(u @ lin, u @ const + Mx["A_DPp"].sum(), eps, notion)
    if notion == "eop":
        return _abs_rows(Mx["A_EOp"] @ lin, Mx["A_EOp"] @ const, eps, notion)
    E = Mx["A_EOd"]  # the TPR/TNR gaps of z = lin x + const; const cancels only if equal across groups
    assert np.allclose(E @ const, 0)
    return _abs_rows((E[0] @ lin, E[1] @ lin), 0.0, eps, notion)


@pytest.mark.parametrize("notion", ["dp", "eod", "eop"])
def test_ms_frontier_matches_vertex_enumeration(notion):
    a0, a1, b = 0.2, 0.55, 0.4
    zb = np.array([0.7, 0.9, 0.8, 0.75])
    caps = (0.9, 0.7)   # both bind: below what z_b's accuracy cap alone would allow
    Mx = M.fairness_matrices(a0, a1, b)
    box = np.vstack([np.eye(4), -np.eye(4)]), np.r_[np.ones(4), np.zeros(4)]
    capA = np.vstack([Mx["A_c"], Mx["A_c0"], Mx["A_c1"]]); capb = np.array([Mx["A_c"] @ zb, *caps])
    for eps in (0.0, 0.03, 0.12, 1.0):
        G, h = _fair_rows(Mx, notion, eps)
        A = np.vstack([box[0], capA, G]); bb = np.r_[box[1], capb, h]
        value = lp.ms_frontier(a0, a1, b, eps, notion, z_b=zb, zb_groups=caps)["acc"]
        assert value == pytest.approx(_vertex_max(Mx["A_c"], A, bb), abs=1e-7), (notion, eps)


@pytest.mark.parametrize("notion", ["dp", "eod"])
def test_fact_frontier_matches_vertex_enumeration(notion):
    """FACT in the flip-probability space x = (p0, q0, p1, q1): z = lin x + const (each z coordinate is affine)."""
    a0, a1, b = 0.25, 0.5, 0.6
    zb = np.array([0.65, 0.9, 0.8, 0.7])
    Mx = M.fairness_matrices(a0, a1, b)
    lin, const = np.zeros((4, 4)), zb.copy()
    for a in (0, 1):
        tpr, tnr = zb[2 * a], zb[2 * a + 1]
        lin[2 * a, 2 * a], lin[2 * a, 2 * a + 1] = -tpr, 1 - tpr        # TPR' = TPR - TPR p + (1 - TPR) q
        lin[2 * a + 1, 2 * a], lin[2 * a + 1, 2 * a + 1] = 1 - tnr, -tnr  # TNR' = TNR - TNR q + (1 - TNR) p
    box = np.vstack([np.eye(4), -np.eye(4)]), np.r_[np.ones(4), np.zeros(4)]
    for eps in (0.0, 0.05, 0.2):
        if notion == "eod":  # E const = gaps of z_b (not 0): move them into the right-hand side
            E = Mx["A_EOd"]
            u0, u1, g0, g1 = E[0] @ lin, E[1] @ lin, E[0] @ const, E[1] @ const
            G = np.array([s0 * u0 + s1 * u1 for s0 in (1, -1) for s1 in (1, -1)])
            h = np.array([eps - (s0 * g0 + s1 * g1) for s0 in (1, -1) for s1 in (1, -1)])
        else:
            G, h = _fair_rows(Mx, notion, eps, lin, const)
        A = np.vstack([box[0], G]); bb = np.r_[box[1], h]
        expected = _vertex_max(Mx["A_c"] @ lin, A, bb) + Mx["A_c"] @ const
        assert lp.fact_frontier(a0, a1, b, eps, zb, notion)["acc"] == pytest.approx(expected, abs=1e-7), (notion, eps)


def test_gstar_vectorised_matches_brute_force():
    rng = np.random.default_rng(5)
    n = 300
    g = rng.integers(0, 2, n); y = (rng.random(n) < np.where(g == 1, 0.6, 0.3)).astype(int)
    s = np.round(2 * (y + 0.7 * g + rng.normal(0, 1, n)))   # integer scores: many ties at every threshold
    grid = np.unique(s)
    for notion in ("eod", "dp", "eop"):
        for lam in (0.0, 1.0, 10.0):
            best = (-np.inf, None, None)
            for c0, c1 in itertools.product(grid, grid):
                m = M.fairness_metrics(y, np.where(g == 0, s >= c0, s >= c1).astype(int), g)
                obj = m["acc"] - lam * m[notion]
                if obj > best[0] + 1e-12:
                    best = (obj, c0, c1)
            r = M.gstar_thresholds(s, y, g, lam=lam, notion=notion, grid=grid)
            assert r["objective"] == pytest.approx(best[0], abs=1e-12), (notion, lam)
            yhat = np.where(g == 0, s >= r["c0"], s >= r["c1"]).astype(int)
            m = M.fairness_metrics(y, yhat, g)
            assert m["acc"] - lam * m[notion] == pytest.approx(best[0], abs=1e-12)


def test_eps_grid_and_roc_with_base():
    from workflow.papers.fairness_pareto.frontiers import eps_grid
    grid = eps_grid(0.07, 0.3, 0.25)
    assert grid[0] == 0 and 0.3 in grid and grid[-1] == 1.0 and (np.diff(grid) > 0).all()
    rng = np.random.default_rng(6)
    g = rng.integers(0, 2, 200); y = rng.integers(0, 2, 200); s = rng.normal(size=200)
    zb = np.array([0.4321, 0.6543, 0.2109, 0.8765])
    roc = M.roc_with_base(s, y, g, zb, 5)
    for a in (0, 1):
        assert any(np.allclose(p, zb[2 * a:2 * a + 2]) for p in roc[a])


def test_split_and_encode():
    parts = data.split_indices(100, [0.7, 0.15, 0.15], seed=3)
    assert [len(p) for p in parts] == [70, 15, 15]
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(100))
    train = pd.DataFrame({"x": [1.0, 3.0], "c": ["a", "b"]})
    test = pd.DataFrame({"x": [2.0], "c": ["z"]})          # unseen category -> all-zero one-hot
    X = data.encode({"train": train, "test": test})
    assert X["train"].shape == (2, 3) and np.allclose(X["test"], [[0.0, 0.0, 0.0]])


# ------------------------------------------------ issue 10: selection on validation, controls, no silent misses
def test_vanilla_init_and_caps_are_chosen_on_validation():
    from workflow.papers.fairness_pareto.train_base import best_on_validation, pick_cap
    assert best_on_validation([0.84, 0.86, 0.86, 0.85]) == 1            # ties go to the first init
    # the group-only model is better on validation: its test accuracy raises the cap ...
    assert pick_cap({"val": 0.80, "test": 0.81}, {"val": 0.82, "test": 0.84}) == (0.84, "group_only")
    # ... but never below the vanilla model's own (z_b stays in K)
    assert pick_cap({"val": 0.80, "test": 0.83}, {"val": 0.82, "test": 0.79}) == (0.83, "group_only")
    # worse (or tied) on validation: the vanilla model's cap, even if the group-only model is better on test
    assert pick_cap({"val": 0.82, "test": 0.80}, {"val": 0.82, "test": 0.95}) == (0.80, "vanilla")


def test_acc_at_level_mixes_with_the_constant_predictor():
    c = 0.76
    # a point under the level counts as is; one above is mixed down to the level: c + (a - c) * level / e
    assert M.acc_at_level([0.80], [0.02], 0.03, c) == pytest.approx(0.80)
    assert M.acc_at_level([0.85], [0.06], 0.03, c) == pytest.approx(c + 0.09 * 0.5)
    assert M.acc_at_level([0.80, 0.85], [0.02, 0.06], 0.03, c) == pytest.approx(0.805)
    # continuous across the level: just above and just below differ by float noise only (issue 12)
    above = M.acc_at_level([0.85], [0.03 + 1e-12], 0.03, c)
    below = M.acc_at_level([0.85], [0.03 - 1e-12], 0.03, c)
    assert abs(above - below) < 1e-9
    # no point (or only worse ones): the constant predictor, which every method can fall back to
    assert M.acc_at_level([], [], 0.03, c) == c and M.acc_at_level([0.5], [0.0], 0.03, c) == c


def test_mixing_with_a_constant_predictor_scales_eod_and_moves_accuracy_linearly():
    """The identity acc_at_level rests on, checked on counts: randomise a classifier with the majority constant."""
    rng = np.random.default_rng(7)
    n = 4000
    g = rng.integers(0, 2, n); y = (rng.random(n) < np.where(g == 1, 0.4, 0.2)).astype(int)
    yhat = ((y + rng.normal(0, 0.7, n) + 0.3 * g) > 0.6).astype(int)
    w = 0.4
    mixed = w * yhat + (1 - w) * 0.0                      # probabilistic prediction: constant 0 is the majority
    m, mm = M.fairness_metrics(y, yhat, g), M.fairness_metrics(y, mixed, g)
    const = 1 - y.mean()
    assert mm["eod"] == pytest.approx(w * m["eod"], abs=1e-12)
    assert mm["acc"] == pytest.approx(const + w * (m["acc"] - const), abs=1e-12)


def test_shared_bias_control_ties_the_biases():
    rng = np.random.default_rng(8)
    n = 500
    g = rng.integers(0, 2, n); y = (rng.random(n) < np.where(g == 1, 0.6, 0.3)).astype(int)
    H = np.c_[y + rng.normal(0, 1, n) + 0.8 * g, rng.normal(0, 1, n)]
    shared = M.retrain_head_group_bias(H, y, g, lam=3.0, epochs=100, lr=0.05, group_bias=False)
    own = M.retrain_head_group_bias(H, y, g, lam=3.0, epochs=100, lr=0.05)
    assert shared["b0"] == shared["b1"] and own["b0"] != own["b1"]


def test_lemma2_control_is_caught_by_the_check():
    for a0, a1, b in [(0.109, 0.300, 0.667), (0.15, 0.61, 0.67)]:
        right = lp.lemma2_accuracy(a0, a1, b)
        wrong = lp.lemma2_accuracy(a0, a1, b, with_eod=False)
        assert abs(right["acc"] - right["const_acc"]) <= 1e-6 < wrong["acc"] - wrong["const_acc"]


def test_shuffled_group_control_removes_the_group_gap():
    from workflow.papers.fairness_pareto.methods import shuffled_group_cell
    rng = np.random.default_rng(9)
    n = 6000
    g = rng.integers(0, 2, n); y = (rng.random(n) < np.where(g == 1, 0.6, 0.15)).astype(int)
    logit = 2 * y - 1 + rng.normal(0, 0.8, n) + 0.5 * g
    s, gs = shuffled_group_cell(logit, y, g, seed=0)
    assert np.array_equal(np.sort(gs), np.sort(g)) and not np.array_equal(gs, g)
    assert abs(s["alpha0"] - s["alpha1"]) < 0.05 < abs(y[g == 0].mean() - y[g == 1].mean())
    Mx = M.fairness_matrices(s["alpha0"], s["alpha1"], s["beta"])
    z = np.asarray(s["z_b"])
    assert [Mx["A_c0"] @ z, Mx["A_c1"] @ z] == pytest.approx(s["caps"])      # own caps: z_b in K
    assert s == shuffled_group_cell(logit, y, g, seed=0)[0]                   # seeded


def _fake_cells(datasets, seeds, rng):
    from workflow.papers.fairness_pareto import evaluate as E
    cols = {c for _, c in E.METRICS.values()}
    rows = []
    for ds in datasets:
        for seed in seeds:
            row = {"dataset": ds, "seed": seed} | {c: float(rng.normal()) for c in cols}
            ctrl = {"shuffled_group": ["min_gap_fact_eod", "min_gap_factgstar_eod", "max_gap_fact_eod_eps01",
                                       "max_gap_factgstar_eod_eps01", "eod_rise_0_to_03", "dp_rise_0_to_03",
                                       "dp_drop_matches_condition"],
                    "fact_frontier": ["max_excess_over_ours_eod", "max_excess_over_ours_dp", "points_above_fact"],
                    "shared_bias": ["ours_minus_eqodds", "ours_minus_gstar"],
                    "lemma2_without_eod": ["abs_gap_to_constant"],
                    "placebo_group_caps": ["min_gap_fact_eod", "min_gap_factgstar_eod", "max_gap_fact_eod_eps01",
                                           "max_gap_factgstar_eod_eps01", "max_excess_over_ours_eod",
                                           "max_excess_over_ours_dp", "points_above_fact"]}
            ctrl |= {name: list(columns) for name, columns in E.AA.items()}
            row |= {f"{name}{E.SEP}{c}": float(rng.normal()) for name, cs in ctrl.items() for c in cs}
            rows.append(row)
    return pd.DataFrame(rows)



@pytest.mark.parametrize("profile, datasets", [("default", ["adult", "adult_married", "compas"]), ("smoke", ["compas"])])
def test_every_claim_metric_is_measured_for_the_claim_and_its_control(profile, datasets):
    """No silent misses: the real claims.yaml is judged on evaluate's metric names, for every claim and control."""
    from workflow.core import claims as C
    from workflow.papers.fairness_pareto import evaluate as E
    cells = _fake_cells(datasets, range(5), np.random.default_rng(10))
    controls = {name: E.measure(E.as_control(cells, name)) for name in (*E.CONTROLS, *E.AA)}
    out = C.evaluate(C.load(E.CLAIMS), E.measure(cells), profile, controls)
    judged = [c for c in out["claims"] if c["kind"] == "reproduction"]
    assert judged and all("control" in c and "name" in c["control"] for c in judged)


def test_a_control_without_its_values_is_an_error():
    from workflow.core import claims as C
    from workflow.papers.fairness_pareto import evaluate as E
    cells = _fake_cells(["adult", "adult_married", "compas"], range(3), np.random.default_rng(11))
    controls = {name: E.measure(E.as_control(cells, name)) for name in (*E.CONTROLS, *E.AA)}
    controls["shared_bias"].pop("c4_ours_minus_eqodds_adult")
    with pytest.raises(C.ClaimsError, match="control shared_bias"):
        C.evaluate(C.load(E.CLAIMS), E.measure(cells), "default", controls)


def test_control_values_come_from_the_same_functions():
    """fact_frontier: C2's metric with FACT's accuracy in place of ours; shared_bias: C4's with the control in place."""
    from workflow.papers.fairness_pareto import evaluate as E
    pts = pd.DataFrame({"method": ["eqodds", "ours_eod", "ours_shared_eod", "gstar_eod", "dfr"],
                        "acc": [0.83, 0.84, 0.80, 0.78, 0.85], "eod": [0.01, 0.02, 0.06, 0.0, 0.2],
                        "ours_at_eod": [0.86] * 5, "ours_at_dp": [0.86] * 5, "fact_at_eod": [0.82] * 5,
                        "fact_at_dp": [0.84] * 5, "factgstar_at_eod": [0.85] * 5, "factgstar_at_dp": [0.85] * 5})
    summ = {"const_acc": 0.76, "lemma2_acc": 0.76, "lemma2_acc_without_eod": 0.8,
            "shuffled_group": {"dp_drop_condition": False}, "dp_drop_condition": False}
    fr = pd.DataFrame([{"frontier": f, "notion": n, "eps": e, "acc": 0.8}
                       for f in ("ours", "fact", "factgstar") for n in ("eod", "dp") for e in (0.0, 0.1, 0.3, 1.0)])
    out = E.control_metrics(fr, pts, summ)
    assert out["fact_frontier__max_excess_over_ours_eod"] == pytest.approx(0.85 - 0.82)
    assert E.point_metrics(pts)["max_excess_over_ours_eod"] == pytest.approx(0.85 - 0.86)
    assert out["shared_bias__ours_minus_eqodds"] == pytest.approx(0.76 + 0.04 * 0.5 - 0.83)
    assert E.method_metrics(pts, 0.76)["ours_minus_eqodds"] == pytest.approx(0.84 - 0.83)
    assert out["lemma2_without_eod__abs_gap_to_constant"] == pytest.approx(0.04)
    assert out["shuffled_group__dp_drop_matches_condition"] == 1.0 and out["shuffled_group__eod_rise_0_to_03"] == 0.0
    assert not any(k.startswith("placebo_group_caps") for k in out)  # no group-blind rows, no frontier: not measured
    # the placebo: the group-blind MS frontier (control file) in ours' place, the old frontiers of the cell kept, and
    # the points placed against the group-blind frontier
    blind = fr[fr.frontier == "ours"].assign(frontier=E.GROUP_BLIND, acc=0.79)
    pts_b = pts.assign(**{f"{E.GROUP_BLIND}_at_eod": 0.81, f"{E.GROUP_BLIND}_at_dp": 0.82})
    out = E.control_metrics(pd.concat([fr, blind]), pts_b, summ, fr.assign(acc=np.where(fr.frontier == "ours", 0.9, 0.8)))
    assert out["placebo_group_caps__min_gap_fact_eod"] == pytest.approx(-0.01)
    assert out["placebo_group_caps__max_excess_over_ours_eod"] == pytest.approx(0.85 - 0.81)
    assert out["placebo_group_caps__max_excess_over_ours_dp"] == pytest.approx(0.85 - 0.82)
    assert out["shuffled_group__eod_rise_0_to_03"] == 0.0  # the group-blind rows do not enter shuffled_group's


# ------------------------------------------------ issue 11: the plan names every cell's files once
def test_plan_lists_cells_and_their_files():
    from workflow.papers.fairness_pareto import plan
    p = {"datasets": ["adult", "adult_married"], "seeds": [0, 12]}
    assert plan.cells(p) == [("adult", 0), ("adult", 12), ("adult_married", 0), ("adult_married", 12)]
    for kind in ("frontiers", "fairfair", "summary", "control", "points"):
        files = plan.paths(p, kind)
        assert len(set(files)) == 4
        assert files == [plan.cell_files(dataset, seed)[kind] for dataset, seed in plan.cells(p)]
    assert plan.cell_files("adult", 12)["fairfair"] == "results/fairness_pareto/frontiers/adult_s12_fairfair.csv"
    assert plan.raw_files("adult") == ["data/raw/adult_train.csv", "data/raw/adult_test.csv"]
    assert plan.raw_files("compas") == ["data/raw/compas.csv"]


def test_the_a_a_nulls_put_each_comparator_of_another_seed_in_the_methods_place():
    """C1: the comparator frontier of the previous seed (cyclically) in the MS frontier's place; C4: a comparator's
    accuracy at EOd <= 0.03 of the previous seed minus its own; a data set with one seed gives NaN."""
    from workflow.papers.fairness_pareto import evaluate as E
    grid = (0.0, 0.1, 0.3, 1.0)
    level = {"ours": 0.85, "fact": 0.80, "factgstar": 0.82}
    fr = pd.DataFrame([{"dataset": ds, "seed": seed, "frontier": f, "notion": n, "eps": e,
                        "acc": level[f] + 0.01 * seed + 0.001 * e}
                       for ds, seeds in (("adult", (0, 1, 2)), ("compas", (0,))) for seed in seeds
                       for f in level for n in ("eod", "dp") for e in grid])
    summaries = [{"dataset": ds, "seed": seed, "dp_drop_condition": False}
                 for ds, seeds in (("adult", (0, 1, 2)), ("compas", (0,))) for seed in seeds]
    cells = pd.DataFrame([{"dataset": s["dataset"], "seed": s["seed"], "at_eod_ours_eod": 0.84,
                           "at_eod_eqodds": 0.80 + 0.01 * s["seed"], "at_eod_gstar_eod": 0.83 - 0.01 * s["seed"]}
                          for s in summaries])
    aa = E.aa_columns(cells, fr, summaries)
    assert aa["aa_fact_factgstar__min_gap_factgstar_eod"].tolist()[:3] == pytest.approx([0.02, -0.01, -0.01])
    assert aa["aa_fact_factgstar__max_gap_fact_eod_eps01"].tolist()[:3] == pytest.approx([0.02, -0.01, -0.01])
    assert aa["aa_eqodds_gstar__ours_minus_eqodds"].tolist()[:3] == pytest.approx([0.02, -0.01, -0.01])
    assert aa["aa_eqodds_gstar__ours_minus_gstar"].tolist()[:3] == pytest.approx([-0.02, 0.01, 0.01])
    assert aa.iloc[3].isna().all()  # COMPAS ran one seed: no independent partner
