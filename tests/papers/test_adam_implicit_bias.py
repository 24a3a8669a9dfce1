"""Tests for workflow/papers/adam_implicit_bias/methods.py and references.py (fast: a few seconds in total).

Reference answers come from hand calculations, from scipy SLSQP / brute-force sampling, from
KKT conditions, or from a naive textbook implementation of the optimizers written below.
"""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy.optimize import linprog, minimize
from scipy.special import expit

from workflow.papers.adam_implicit_bias import methods as M
from workflow.papers.adam_implicit_bias import references as R

GR_SEED = 5  # make_gr needs ~200 rejection tries for this seed (< 1 s)
GAUSS_SEED = 4  # its Mahalanobis direction differs clearly from both w_2 and w_inf


@pytest.fixture(scope="module")
def gr():
    X, y, info = R.make_gr(np.random.default_rng(GR_SEED))
    return X, y, info


@pytest.fixture(scope="module")
def gauss():
    X, y, info = R.make_gauss(np.random.default_rng(GAUSS_SEED))
    return X, y, info


# --------------------------------------------------------------------------------------------
# naive reference optimizers (plain float64, no log-scaling)
# --------------------------------------------------------------------------------------------

def _batch_grad(A, w, idx):
    """Mean logistic-loss gradient over rows idx: (1/b) sum_i l'(a_i^T w) a_i, l'(z) = -expit(-z)."""
    z = A[idx] @ w
    return (-expit(-z)) @ A[idx] / len(idx)


def naive_adam(X, y, steps, batch=1, eta0=0.1, beta1=0.9, beta2=0.999):
    A = y[:, None] * X
    n, d = A.shape
    w, m, v = np.zeros(d), np.zeros(d), np.zeros(d)
    traj = []
    for t in range(1, steps + 1):
        idx = [((t - 1) * batch + j) % n for j in range(batch)]
        g = _batch_grad(A, w, idx)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        mhat = m / (1 - beta1 ** t)
        vhat = v / (1 - beta2 ** t)
        w = w - eta0 / math.sqrt(t) * mhat / np.sqrt(vhat)
        traj.append(w.copy())
    return np.array(traj)


def naive_signum(X, y, steps, batch=1, eta0=0.1, beta=0.99):
    A = y[:, None] * X
    n, d = A.shape
    w, m = np.zeros(d), np.zeros(d)
    traj = []
    for t in range(1, steps + 1):
        idx = [((t - 1) * batch + j) % n for j in range(batch)]
        m = beta * m + (1 - beta) * _batch_grad(A, w, idx)
        w = w - eta0 / math.sqrt(t) * np.sign(m)
        traj.append(w.copy())
    return np.array(traj)


def naive_gd(X, y, steps, batch=1, eta0=0.1):
    A = y[:, None] * X
    n, d = A.shape
    w = np.zeros(d)
    traj = []
    for t in range(1, steps + 1):
        idx = [((t - 1) * batch + j) % n for j in range(batch)]
        w = w - eta0 / math.sqrt(t) * _batch_grad(A, w, idx)
        traj.append(w.copy())
    return np.array(traj)


def naive_proxy(X, y, steps, eta0=0.1):
    A = y[:, None] * X
    w = np.zeros(A.shape[1])
    traj = []
    for t in range(1, steps + 1):
        G = (-expit(-(A @ w)))[:, None] * A          # per-sample gradients
        w = w - eta0 / math.sqrt(t) * G.sum(0) / np.sqrt((G ** 2).sum(0))
        traj.append(w.copy())
    return np.array(traj)


# --------------------------------------------------------------------------------------------
# max-margin references
# --------------------------------------------------------------------------------------------

def test_max_margin_single_point_by_hand():
    X, y = np.array([[2.0, 1.0]]), np.array([1.0])
    r2 = R.l2_max_margin(X, y)
    np.testing.assert_allclose(r2["w"], np.array([2.0, 1.0]) / math.sqrt(5), atol=1e-7)
    assert r2["gamma"] == pytest.approx(math.sqrt(5), rel=1e-7)
    ri = R.linf_max_margin(X, y)
    np.testing.assert_allclose(ri["w"], [1.0, 1.0], atol=1e-9)
    assert ri["gamma"] == pytest.approx(3.0, rel=1e-9)
    # the label flips the sign of the problem: same answer for (-x, -1)
    np.testing.assert_allclose(R.l2_max_margin(-X, -y)["w"], r2["w"], atol=1e-7)


def test_max_margin_symmetric_pair_by_hand():
    # a_1 = (1, 1), a_2 = (1, -1): both max-margin problems are solved by w = (1, 0), margin 1
    X, y = np.array([[1.0, 1.0], [-1.0, 1.0]]), np.array([1.0, -1.0])
    r2, ri = R.l2_max_margin(X, y), R.linf_max_margin(X, y)
    np.testing.assert_allclose(r2["w"], [1.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(ri["w"], [1.0, 0.0], atol=1e-9)
    assert r2["gamma"] == pytest.approx(1.0, rel=1e-7)
    assert ri["gamma"] == pytest.approx(1.0, rel=1e-9)
    # the l2 duals satisfy 2 w_hat = sum_i alpha_i a_i with w_hat = (1, 0): alpha = (1, 1)
    np.testing.assert_allclose(r2["alpha"], [1.0, 1.0], atol=1e-6)


def test_l2_max_margin_matches_slsqp(gauss):
    X, y, _ = gauss
    A = y[:, None] * X
    ri = R.linf_max_margin(X, y)
    w0 = ri["w"] / ri["gamma"]  # feasible start: margins >= 1
    res = minimize(lambda w: w @ w, w0, jac=lambda w: 2 * w, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda w: A @ w - 1, "jac": lambda w: A}],
                   options={"ftol": 1e-14, "maxiter": 500})
    assert res.success
    ref = res.x / np.linalg.norm(res.x)
    r2 = R.l2_max_margin(X, y)
    assert np.linalg.norm(r2["w"]) == pytest.approx(1.0, abs=1e-12)
    assert M.cosine(r2["w"], ref) > 1 - 1e-9
    assert r2["gamma"] == pytest.approx(1 / np.linalg.norm(res.x), rel=1e-6)


def test_max_margins_dominate_random_directions(gauss):
    X, y, _ = gauss
    A = y[:, None] * X
    r2, ri = R.l2_max_margin(X, y), R.linf_max_margin(X, y)
    assert np.max(np.abs(ri["w"])) == pytest.approx(1.0, abs=1e-12)
    W = np.random.default_rng(0).standard_normal((20000, X.shape[1]))
    mins = (W @ A.T).min(axis=1)
    assert np.max(mins / np.linalg.norm(W, axis=1)) <= r2["gamma"] * (1 + 1e-7)
    assert np.max(mins / np.abs(W).max(axis=1)) <= ri["gamma"] * (1 + 1e-7)
    # and the references attain their own margins; each is at most as good in the other norm
    rr = M.margin_ratios(r2["w"], X, y, r2["gamma"], ri["gamma"])
    assert rr["r2"] == pytest.approx(1.0, abs=1e-7) and rr["rinf"] <= 1 + 1e-7
    rr = M.margin_ratios(ri["w"], X, y, r2["gamma"], ri["gamma"])
    assert rr["rinf"] == pytest.approx(1.0, abs=1e-9) and rr["r2"] <= 1 + 1e-7


def test_cosine_and_margin_ratios_by_hand():
    assert M.cosine([1, 0], [1, 1]) == pytest.approx(1 / math.sqrt(2))
    assert M.cosine([1, 2], [-2, -4]) == pytest.approx(-1.0)
    X, y = np.array([[2.0, 1.0]]), np.array([1.0])
    r = M.margin_ratios(np.array([1.0, 0.0]), X, y, math.sqrt(5), 3.0)
    assert r["r2"] == pytest.approx(2 / math.sqrt(5))
    assert r["rinf"] == pytest.approx(2 / 3)


def test_log_steps():
    s = M.log_steps(100000, 60)
    assert s[0] == 1 and s[-1] == 100000
    assert np.all(np.diff(s) > 0) and 40 <= s.size <= 60
    assert list(M.log_steps(1)) == [1]
    assert M.log_steps(7, 60).tolist() == list(range(1, 8))


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------

def test_make_gr_rejection_rules_and_determinism(gr):
    X, y, info = gr
    assert X.shape == (10, 4) and y.shape == (10,)
    assert set(np.unique(y)) == {-1.0, 1.0}
    c = np.abs(X)
    np.testing.assert_allclose(c, c[:, :1] * np.ones((1, 4)))          # |x_ik| = c_i for all k
    assert np.all((c[:, 0] >= 0.5) & (c[:, 0] <= 2.0))
    r2, ri = R.l2_max_margin(X, y), R.linf_max_margin(X, y)
    assert ri["gamma"] > 1e-3
    assert M.margin_ratios(r2["w"], X, y, r2["gamma"], ri["gamma"])["rinf"] < 0.85
    assert M.margin_ratios(ri["w"], X, y, r2["gamma"], ri["gamma"])["r2"] < 0.85
    X2, y2, info2 = R.make_gr(np.random.default_rng(GR_SEED))
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert info["tries"] == info2["tries"] >= 1


def test_make_gr_gives_up():
    with pytest.raises(RuntimeError):
        R.make_gr(np.random.default_rng(0), max_tries=3)  # seed 0 needs > 1000 tries


def test_make_gauss_balanced_separable_deterministic(gauss):
    X, y, info = gauss
    assert X.shape == (10, 4) and sorted(y.tolist()) == [-1.0] * 5 + [1.0] * 5
    # separable through the origin: independent LP feasibility check  y_i x_i^T w >= 1
    res = linprog(np.zeros(4), A_ub=-(y[:, None] * X), b_ub=-np.ones(10),
                  bounds=[(None, None)] * 4, method="highs")
    assert res.status == 0
    X2, y2, _ = R.make_gauss(np.random.default_rng(GAUSS_SEED))
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _, _ = R.make_gauss(np.random.default_rng(GAUSS_SEED + 1))
    assert not np.array_equal(X, X3)
    # within a class the shift 0.8 y mu is constant: per-coordinate spread is diag(3, 1, 0.5, 0.2)
    # n = 1,000 (500 a class: a std's standard error ~3 %, so rtol 0.1 still tells 3 from 9 or 1.7): 43 draws until
    # a separable one, 7 s; n = 2,000 needed 310 draws, 73 s of CI
    Xb, yb, _ = R.make_gauss(np.random.default_rng(0), n=1000)
    for cls in (-1.0, 1.0):
        np.testing.assert_allclose(Xb[yb == cls].std(axis=0), [3.0, 1.0, 0.5, 0.2], rtol=0.1)


# --------------------------------------------------------------------------------------------
# optimizers
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch", [1, 5, 10])
def test_log_scaled_adam_equals_naive_adam(gr, batch):
    X, y, _ = gr
    T = 300
    ref = naive_adam(X, y, T, batch=batch)
    res = M.train(X, y, "adam", T, batch=batch, record_at=range(1, T + 1))
    assert res["steps"].tolist() == list(range(1, T + 1))
    err = np.abs(res["w"] - ref).max(axis=1) / np.abs(ref).max(axis=1)
    assert err.max() < 1e-10


@pytest.mark.parametrize("beta2", [0.99, 0.999])
def test_log_scaled_adam_equals_naive_adam_gauss(gauss, beta2):
    X, y, _ = gauss
    T = 300
    ref = naive_adam(X, y, T, batch=1, beta2=beta2)
    res = M.train(X, y, "adam", T, batch=1, beta2=beta2, record_at=[50, 100, 300])
    assert res["steps"].tolist() == [50, 100, 300]
    np.testing.assert_allclose(res["w"], ref[[49, 99, 299]], rtol=1e-10, atol=0)


@pytest.mark.parametrize("batch", [1, 10])
def test_log_scaled_signum_equals_naive_signum(gr, batch):
    X, y, _ = gr
    T = 300
    ref = naive_signum(X, y, T, batch=batch)
    res = M.train(X, y, "signum", T, batch=batch, record_at=range(1, T + 1))
    np.testing.assert_allclose(res["w"], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("batch", [1, 5, 10])
def test_gd_control_equals_naive_gd(gr, batch):
    X, y, _ = gr
    T = 300
    ref = naive_gd(X, y, T, batch=batch)
    res = M.train(X, y, "gd", T, batch=batch, record_at=range(1, T + 1))
    np.testing.assert_allclose(res["w"], ref, rtol=1e-12, atol=1e-14)


def test_log_scaled_proxy_equals_naive_proxy(gauss):
    X, y, _ = gauss
    T = 300
    ref = naive_proxy(X, y, T)
    res = M.train(X, y, "adam_proxy", T, record_at=range(1, T + 1))
    np.testing.assert_allclose(res["w"], ref, rtol=1e-10, atol=1e-12)


def test_default_recording_includes_final_step(gr):
    X, y, _ = gr
    res = M.train(X, y, "adam", 1234)
    assert res["steps"][-1] == 1234 and res["steps"][0] == 1
    assert res["w"].shape == (res["steps"].size, 4)
    res2 = M.train(X, y, "adam", 1234, record_at=[10, 5000])       # out-of-range dropped, final added
    assert res2["steps"].tolist() == [10, 1234]
    np.testing.assert_array_equal(res2["w"][-1], res["w"][-1])


def test_bad_arguments(gr):
    X, y, _ = gr
    with pytest.raises(ValueError):
        M.train(X, y, "sgd", 10)
    with pytest.raises(ValueError):
        M.train(X, y, "adam", 10, batch=11)


def _huge_margin_start(X, y, margin=1000.0):
    """w0 on the l2 max-margin direction with minimum margin `margin` (all l'(z) underflow)."""
    r2 = R.l2_max_margin(X, y)
    return margin / r2["gamma"] * r2["w"]


@pytest.mark.parametrize("algorithm,batch", [("adam", 1), ("adam", 5), ("adam", 10),
                                             ("signum", 1), ("signum", 10), ("adam_proxy", 1)])
def test_no_underflow_at_huge_margins(gr, algorithm, batch):
    X, y, _ = gr
    A = y[:, None] * X
    w0 = _huge_margin_start(X, y)
    assert np.all(expit(-(A @ w0)) == 0.0)      # float64 gradients are exactly zero at the start
    T = 5000
    res = M.train(X, y, algorithm, T, batch=batch, w0=w0, record_at=[10, 100, 1000, T])
    W = res["w"]
    assert np.all(np.isfinite(W))
    margins = A @ W.T
    assert margins.min() > 745                  # never left the underflow region
    norms = np.linalg.norm(np.vstack([w0, W]), axis=1)
    assert np.all(np.diff(norms) > 1e-3)        # ... and still moves outwards
    assert norms[-1] - norms[0] > 0.5


def naive_adam_decimal(X, y, steps, batch=1, eta0=0.1, beta1=0.9, beta2=0.999, w0=None, prec=60):
    """Textbook Adam (eps = 0) in arbitrary-precision decimal arithmetic: nothing underflows."""
    with localcontext() as ctx:
        ctx.prec = prec
        A = [[Decimal(float(y[i] * X[i, k])) for k in range(X.shape[1])] for i in range(X.shape[0])]
        n, d = len(A), len(A[0])
        b1, b2, one = Decimal(beta1), Decimal(beta2), Decimal(1)
        w = [Decimal(0)] * d if w0 is None else [Decimal(float(x)) for x in w0]
        m, v = [Decimal(0)] * d, [Decimal(0)] * d
        for t in range(1, steps + 1):
            g = [Decimal(0)] * d
            for j in range(batch):
                a = A[((t - 1) * batch + j) % n]
                lp = -one / (one + sum(ak * wk for ak, wk in zip(a, w)).exp())   # l'(z)
                g = [gk + lp * ak / batch for gk, ak in zip(g, a)]
            m = [b1 * mk + (one - b1) * gk for mk, gk in zip(m, g)]
            v = [b2 * vk + (one - b2) * gk * gk for vk, gk in zip(v, g)]
            lr = Decimal(eta0) / Decimal(t).sqrt()
            c1, c2 = one - b1 ** t, one - b2 ** t
            w = [wk - lr * (mk / c1) / (vk / c2).sqrt() for wk, mk, vk in zip(w, m, v)]
        return np.array([float(wk) for wk in w])


@pytest.mark.parametrize("batch", [1, 10])
def test_log_scaled_adam_exact_where_float_underflows(gr, batch):
    X, y, _ = gr
    T = 200
    w0 = _huge_margin_start(X, y)
    w = M.train(X, y, "adam", T, batch=batch, w0=w0, record_at=[T])["w"][-1]
    ref = naive_adam_decimal(X, y, T, batch=batch, w0=w0)
    assert np.linalg.norm(ref - w0) > 0.5            # the exact iterate moved a lot...
    np.testing.assert_allclose(w, ref, rtol=1e-10)   # ...and the float64 log-scaled Adam follows it
    # same after a sudden drop of the loss scale from w0 = 0 (data scaled up: margins > 800 after
    # the first steps; exact Adam then crawls because v remembers the early large gradients)
    Xs = 1e4 * X
    w = M.train(Xs, y, "adam", T, batch=batch, record_at=[T])["w"][-1]
    assert ((y[:, None] * Xs) @ w).min() > 800
    np.testing.assert_allclose(w, naive_adam_decimal(Xs, y, T, batch=batch), rtol=1e-10)


# --------------------------------------------------------------------------------------------
# Mahalanobis fixed point
# --------------------------------------------------------------------------------------------

def _check_fixed_point(X, y, fp, tol=2e-6):
    """KKT certificate (solver-independent): w is optimal for min sum_k P_k w_k^2 s.t. A w >= 1
    with duals proportional to p iff P w is proportional to A^T p, p >= 0, and p_i > 0 only on
    points with minimal margin (complementary slackness)."""
    A = y[:, None] * X
    p = fp["p"]
    P = np.sqrt((p ** 2) @ (X ** 2))
    u = (A.T @ p) / P                       # stationarity: 2 P_k w_k = kappa (A^T p)_k
    assert M.cosine(u, fp["w"]) > 1 - 1e-10
    marg = A @ (u / np.linalg.norm(u))
    active = p > 1e-5
    assert np.all(marg > 0)
    np.testing.assert_allclose(marg[active], marg.min(), rtol=tol)
    assert np.all(p[~active] < 1e-6)


def test_fixed_point_on_gr_data(gr):
    X, y, _ = gr
    fp = R.mahalanobis_fixed_point(X, y)
    p = fp["p"]
    assert fp["converged"] and 1 <= fp["iterations"] < 500
    assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
    assert fp["residual"] < 1e-6
    _check_fixed_point(X, y, fp)
    # GR data: P_k = sqrt(sum_i p_i^2 c_i^2) is the same for every k, so the fixed point is l2
    assert M.cosine(fp["w"], R.l2_max_margin(X, y)["w"]) > 1 - 1e-9


def test_fixed_point_pure_rademacher_equals_l2():
    rng = np.random.default_rng(11)
    while True:  # independent little generator: c_i = 1, separable with a clear margin
        X = rng.choice([-1.0, 1.0], size=(8, 5))
        y = np.sign(X @ rng.standard_normal(5))
        if np.all(y != 0) and abs(y.sum()) < 8 and R.linf_max_margin(X, y)["gamma"] > 0.1:
            break
    fp = R.mahalanobis_fixed_point(X, y)
    assert fp["converged"]
    assert M.cosine(fp["w"], R.l2_max_margin(X, y)["w"]) > 1 - 1e-9


def test_fixed_point_on_gauss_differs_from_l2_and_linf(gauss):
    X, y, _ = gauss
    fp = R.mahalanobis_fixed_point(X, y)
    assert fp["converged"]
    assert np.all(fp["p"] >= 0) and fp["p"].sum() == pytest.approx(1.0, abs=1e-12)
    _check_fixed_point(X, y, fp)
    c2 = M.cosine(fp["w"], R.l2_max_margin(X, y)["w"])
    ci = M.cosine(fp["w"], R.linf_max_margin(X, y)["w"])
    assert c2 < 0.9999 and ci < 0.9999


# --------------------------------------------------------------------------------------------
# qualitative claims (cheap)
# --------------------------------------------------------------------------------------------

def test_inc_adam_closer_to_l2_than_det_adam(gr):
    X, y, _ = gr
    T = 20000
    r2, ri = R.l2_max_margin(X, y), R.linf_max_margin(X, y)
    w_inc = M.train(X, y, "adam", T, batch=1, record_at=[T])["w"][-1]
    w_det = M.train(X, y, "adam", T, batch=10, record_at=[T])["w"][-1]
    assert M.cosine(w_inc, r2["w"]) > M.cosine(w_det, r2["w"])
    m_inc = M.margin_ratios(w_inc, X, y, r2["gamma"], ri["gamma"])
    m_det = M.margin_ratios(w_det, X, y, r2["gamma"], ri["gamma"])
    assert m_inc["r2"] > m_det["r2"] and m_det["rinf"] > m_inc["rinf"]


def test_proxy_tracks_fixed_point_on_gauss(gauss):
    X, y, _ = gauss
    fp = R.mahalanobis_fixed_point(X, y)
    w = M.train(X, y, "adam_proxy", 20000, record_at=[20000])["w"][-1]
    assert M.cosine(w, fp["w"]) > 0.99


def test_gd_control_is_not_at_the_linf_margin(gr):
    """The Signum control (C3): GD drifts towards l2, so its r_inf stays well below Signum's."""
    X, y, _ = gr
    T = 20000
    r2, ri = R.l2_max_margin(X, y), R.linf_max_margin(X, y)
    ratios = {algo: M.margin_ratios(M.train(X, y, algo, T, batch=10, record_at=[T])["w"][-1], X, y, r2["gamma"],
                                    ri["gamma"])["rinf"] for algo in ("gd", "signum")}
    assert ratios["signum"] > 0.95 and ratios["gd"] < ratios["signum"] - 0.05


# --------------------------------------------------------------------------------------------
# evaluate step: claim metrics and the controls' metrics
# --------------------------------------------------------------------------------------------

def _final_table(adam_rinf=(0.75, 0.8, 0.9, 0.99)):
    """A hand-made final table: one GR set with the batch sweeps of Adam, Signum and GD, one Gauss set."""
    import pandas as pd

    rows = []
    for b, (tag, rinf) in enumerate(zip(("inc", "mb2", "mb5", "det"), adam_rinf)):
        rows.append(dict(dataset="gr0", algorithm=f"{tag}_adam", rinf=rinf, r2=0.98 - 0.02 * b, cos_w2=0.999 - 0.01 * b))
        rows.append(dict(dataset="gr0", algorithm=f"{tag}_signum", rinf=0.99 + 0.001 * (b % 2), r2=0.9, cos_w2=0.95))
        rows.append(dict(dataset="gr0", algorithm=f"{tag}_gd", rinf=0.7, r2=0.9 + 0.01 * b, cos_w2=0.99))
        rows.append(dict(dataset="gr0", algorithm=f"{tag}_signum_rot", rinf=0.8, r2=0.95, cos_w2=0.96))
    rows.append(dict(dataset="gr0", algorithm="inc_adam_b99", rinf=0.7, r2=0.98, cos_w2=0.999))
    rows.append(dict(dataset="gr0", algorithm="inc_adam_fullv", rinf=0.97, r2=0.9, cos_w2=0.9))
    rows.append(dict(dataset="gr0", algorithm="det_adam_psv", rinf=0.76, r2=0.98, cos_w2=0.999))
    for algo, fp, c2, ci in (("adam_proxy", 0.999, 0.9, 0.9), ("inc_adam_b99", 0.995, 0.95, 0.9),
                             ("inc_adam", 0.99, 0.94, 0.92), ("inc_adam_b9999", 0.97, 0.9, 0.9),
                             ("det_adam", 0.95, 0.9, 0.995), ("adam_proxy_fullv", 0.96, 0.9, 0.999),
                             ("inc_adam_b99_fullv", 0.96, 0.9, 0.99), ("inc_adam_fullv", 0.96, 0.9, 0.99),
                             ("det_adam_psv", 0.99, 0.94, 0.92)):
        rows.append(dict(dataset="gauss0", algorithm=algo, cos_wfp=fp, cos_w2=c2, cos_winf=ci))
    t = pd.DataFrame(rows)
    t.insert(1, "family", t["dataset"].str.rstrip("0123456789"))
    return t


def test_measure_trend_and_controls_from_a_hand_made_table():
    from workflow.core.params import read_yaml
    from workflow.papers.adam_implicit_bias.evaluate import CLAIMS, CONTROLS, NULLS, measure, measure_controls

    got = measure(_final_table())
    assert got["c5_rinf_violations"] == [0] and got["c5_r2_violations"] == [0]
    assert np.allclose(got["c5_rinf_rise_b10_minus_b1"], [0.24]) and np.allclose(got["c5_rinf_rise_b5_minus_b1"], [0.15])
    assert got["c3_signum_min_rinf"] == [0.99] and "c5_signum_min_rinf" not in got
    assert np.allclose(got["c4_fp_lead_inc_adam"], [0.99 - 0.92])
    ctrl = measure_controls(_final_table())
    assert set(ctrl) == set(CONTROLS) | set(NULLS) | {"placebo_batch_shuffled"}
    regime = ctrl["placebo_second_moment_regime"]  # the placebos' runs in the methods' places, nothing else
    assert regime["c1_rinf_inc_adam"] == [0.97] and regime["c4_cos_winf_det_adam"] == [0.92]
    assert regime["c4_cos_wfp_proxy"] == [0.96] and np.allclose(regime["c4_fp_lead_inc_adam"], [0.06])
    assert np.allclose(ctrl["placebo_full_batch_second_moment"]["c2_rinf_gap_det_minus_inc"], [0.76 - 0.75])
    assert ctrl["placebo_sign_basis"]["c3_signum_min_rinf"] == [0.8]
    swapped = ctrl["batch_regime_swapped"]
    assert swapped["c1_rinf_inc_adam"] == [0.99] and swapped["c2_rinf_det_adam"] == [0.75]
    assert np.allclose(swapped["c2_rinf_gap_det_minus_inc"], [-0.24])  # not 0: both slots are swapped
    assert swapped["c4_cos_wfp_proxy"] == [0.95] and swapped["c4_cos_winf_det_adam"] == [0.92]
    assert ctrl["gd_for_signum"]["c3_signum_min_rinf"] == [0.7]
    assert np.allclose(ctrl["signum_for_adam"]["c5_rinf_rise_b10_minus_b1"], [0.001])
    for claim in read_yaml(CLAIMS)["claims"]:  # every control and null has every metric its claims check
        for name in [claim.get("control"), *claim.get("nulls", {}).values()]:
            if isinstance(name, str):
                assert {c["metric"] for c in claim["checks"]} <= set(ctrl[name]), (claim["id"], name)
    assert ctrl["aa_inc_adam"]["c2_rinf_gap_det_minus_inc"] == []  # one GR set: Inc-Adam has no independent partner


def test_the_aa_null_takes_inc_adam_of_the_next_data_set():
    """The A/A null (C2, C5): Inc-Adam of gr1 in Det-Adam's and mini-batch Adam's place on gr0 and vice versa, on the
    data sets where those runs exist; the method's own values are untouched."""
    import pandas as pd

    from workflow.papers.adam_implicit_bias.evaluate import measure, measure_controls

    one, two = _final_table(), _final_table(adam_rinf=(0.7, 0.8, 0.9, 0.99))
    t = pd.concat([one, two[two.family == "gr"].assign(dataset="gr1")], ignore_index=True)
    aa = measure_controls(t)["aa_inc_adam"]
    assert np.allclose(aa["c2_rinf_det_adam"], [0.7, 0.75])
    assert np.allclose(aa["c2_rinf_gap_det_minus_inc"], [0.7 - 0.75, 0.75 - 0.7])
    assert np.allclose(aa["c5_rinf_rise_b10_minus_b1"], [-0.05, 0.05])
    assert measure(t)["c2_rinf_det_adam"] == [0.99, 0.99]


def test_a_flat_batch_curve_fails_c5():
    """The issue-10 fix: Adam whose bias does not move with the batch size meets the violation counts but not C5."""
    from workflow.core import claims as claims_mod
    from workflow.core.params import read_yaml
    from workflow.papers.adam_implicit_bias.evaluate import CLAIMS, measure, measure_controls

    flat = _final_table(adam_rinf=(0.8, 0.8, 0.8, 0.8))
    spec = read_yaml(CLAIMS)
    res = {c["id"]: c for c in claims_mod.evaluate(spec, measure(flat), "smoke", measure_controls(flat))["claims"]}
    c5 = {c["metric"]: c["verdict"] for c in res["C5"]["checks"]}
    assert c5["c5_rinf_violations"] == "pass" and c5["c5_rinf_rise_b10_minus_b1"] == "fail"
    assert res["C5"]["verdict"] == "fail"
    moving = _final_table()
    res = {c["id"]: c for c in claims_mod.evaluate(spec, measure(moving), "smoke", measure_controls(moving))["claims"]}
    assert res["C5"]["verdict"] == "pass" and res["C5"]["control"]["verdict"] == "fail"


def test_the_batch_shuffled_placebo_permutes_the_sweep_and_nothing_else():
    """C5's placebo: each GR set's four Adam sweep runs relabelled by a seeded non-identity permutation; the same
    runs (the multiset of values) and every other row kept; reproducible."""
    from workflow.papers.adam_implicit_bias.evaluate import BATCH_SWEEP, batch_shuffled

    t = _final_table()
    a, b = batch_shuffled(t), batch_shuffled(t)
    assert a.equals(b) and len(a) == len(t)
    sweep = lambda f: f[f.algorithm.isin(BATCH_SWEEP["adam"]) & (f.dataset == "gr0")].set_index("algorithm").loc[BATCH_SWEEP["adam"], "rinf"]  # noqa: E731
    assert sorted(sweep(a)) == sorted(sweep(t)) and list(sweep(a)) != list(sweep(t))
    rest = lambda f: f[~f.algorithm.isin(BATCH_SWEEP["adam"])].reset_index(drop=True)  # noqa: E731
    assert rest(a).equals(rest(t))


def test_the_second_moment_placebos_are_the_other_regime_exactly_at_the_ends():
    """precond = per_sample at b = 1 is Adam itself, precond = full at b = N is Det-Adam itself; the placebos differ."""
    from workflow.papers.adam_implicit_bias import methods

    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3)) * [1.0, 2.0, 0.5]
    y = np.sign(X @ [1.0, 0.5, -0.3])
    run = lambda **k: methods.train(X, y, "adam", 300, **k)["w"][-1]  # noqa: E731
    assert np.allclose(run(batch=1, precond="per_sample"), run(batch=1))
    assert np.allclose(run(batch=6, precond="full"), run(batch=6))
    assert not np.allclose(run(batch=1, precond="full"), run(batch=1))
    assert not np.allclose(run(batch=6, precond="per_sample"), run(batch=6))
    with pytest.raises(ValueError):
        methods.train(X, y, "signum", 10, precond="full")
