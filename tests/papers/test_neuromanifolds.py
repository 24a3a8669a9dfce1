"""Tests for the ``neuromanifolds`` core algorithms (workflow/papers/neuromanifolds). Tiny sizes, one thread.

Known answers used:
* sigma = x^r, MLP (n, k, 1): M = affine cone over the k-th secant variety of the Veronese nu_r(P^{n-1});
  dim = nk - k(k-1)/2 (r = 2, k < n: symmetric matrices of rank <= k), min(nk, C(n+r-1, r)) otherwise,
  minus 1 at the Alexander-Hirschowitz exceptions (n, r, k) = (3,4,5), (4,4,9), (5,4,14), (5,3,7).
* generic quadratic sigma, MLP (n, k, 1), k < n: dim = nk - k(k-1)/2 + k  (< #params = nk + k).
* paper's example: MLP (2,2,1), sigma = x^3 + x^2: a hypersurface (dim 6) in R^7.
"""

from fractions import Fraction

import numpy as np
import pytest
import torch

from workflow.papers.neuromanifolds import dimension, identifiability, points, singular, training
from workflow.papers.neuromanifolds import nets as N

torch.set_num_threads(1)


def _point(spec, r, kind="generic", n=None, seed=0):
    a = points.make_arch(spec)
    rng = np.random.default_rng(seed)
    c = N.activation_coeffs(r, kind, rng)
    th = points.init_params(a, rng)
    X = points.sample_inputs(n or 3 * a.n_params + 10, a.widths[0], rng)
    return a, c, th, X


def _torch_net(a, c, X):
    Bs = [torch.tensor(b, dtype=torch.float64) for b in a.bases]
    Xt = torch.tensor(X)

    def f(t):
        z = Xt
        for l, B in enumerate(Bs):
            W = torch.tensordot(t[a.layer_slice(l)], B, dims=1)
            z = z @ W.T
            if l < a.n_layers - 1:
                z = sum(float(c[i]) * z ** i for i in range(len(c)))
        return z.reshape(-1)
    return f


# ----------------------------------------------------------------------------------------- engine
@pytest.mark.parametrize("spec", [
    {"kind": "mlp", "widths": [3, 2, 2, 2]},
    {"kind": "cnn", "kernels": [4, 3, 2], "strides": [1, 2, 1]},
])
def test_jacobian_matches_torch_autograd(spec):
    a, c, th, X = _point(spec, 3, n=9, seed=1)
    f, J = N.forward_and_jacobian(a, th, X, c)
    fn = _torch_net(a, c, X)
    Jt = torch.autograd.functional.jacobian(fn, torch.tensor(th)).numpy()
    assert np.allclose(f.ravel(), fn(torch.tensor(th)).numpy(), rtol=1e-12, atol=1e-12)
    assert np.allclose(J, Jt, rtol=1e-10, atol=1e-12)
    assert J.shape == (9 * a.widths[-1], a.n_params)


def test_cnn_layout_is_strided_convolution():
    a = N.cnn_arch([3, 2], [2, 1])
    assert a.widths == (5, 2, 1) and a.n_params == 5
    assert N.cnn_arch([4, 3, 2], [1, 2, 1]).widths == (8, 5, 2, 1)
    assert N.cnn_arch([5, 3], [2, 1]).widths == (9, 3, 1)
    rng = np.random.default_rng(0)
    c = np.array([0.0, 1.0, 1.0])  # sigma = y^2 + y (paper's CNN example)
    th = rng.standard_normal(5)
    X = rng.standard_normal((6, 5))
    w, v = th[:3], th[3:]
    sig = lambda y: y ** 2 + y  # noqa: E731
    manual = v[0] * sig(X[:, 0:3] @ w) + v[1] * sig(X[:, 2:5] @ w)
    assert np.allclose(N.forward(a, th, X, c)[:, 0], manual, rtol=1e-13)


def test_mlp_layout_row_major():
    a = N.mlp_arch([2, 3, 1])
    th = np.arange(1.0, 10.0) / 10
    X = np.array([[0.3, -0.7]])
    c = np.array([0.0, 1.0, 0.5])
    W1, W2 = th[:6].reshape(3, 2), th[6:].reshape(1, 3)
    h = W1 @ X[0]
    assert np.isclose(N.forward(a, th, X, c)[0, 0], W2 @ (h + 0.5 * h ** 2))


def test_loss_gradient_matches_finite_differences():
    a, c, th, X = _point({"kind": "mlp", "widths": [2, 3, 2]}, 3, n=15, seed=2)
    Y = np.random.default_rng(3).standard_normal((15, 2))
    L, g = training.mse_loss_and_grad(a, th, X, Y, c)
    assert np.isclose(L, np.mean(np.sum((N.forward(a, th, X, c) - Y) ** 2, axis=1)))
    h = 1e-6
    fd = np.array([(training.mse_loss_and_grad(a, th + h * e, X, Y, c)[0]
                    - training.mse_loss_and_grad(a, th - h * e, X, Y, c)[0]) / (2 * h) for e in np.eye(a.n_params)])
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------------- exact ranks
def test_exact_rank_primitives():
    assert N.rank_rational([[1, 2], [2, 4]]) == 1
    assert N.rank_rational([[Fraction(1, 3), 1], [1, 3]]) == 1
    assert N.rank_rational(np.eye(3)) == 3
    assert N.rank_mod_p([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 2
    # rank mod p is only a lower bound of the rational rank: p * I_2 has rank 0 mod p
    assert N.rank_mod_p([[7, 0], [0, 1]], p=7) == 1 and N.rank_rational([[7, 0], [0, 1]]) == 2
    # exact image of dyadic floats in F_p: 0.5 * 2 = 1
    p = N.MERSENNE_61
    half = N.to_mod_p(np.array([0.5]))[0]
    assert half * 2 % p == 1


@pytest.mark.parametrize("spec,r,kind", [
    ({"kind": "mlp", "widths": [2, 2, 1]}, 3, "generic"),
    ({"kind": "mlp", "widths": [2, 2, 1]}, 3, "monomial"),
    ({"kind": "cnn", "kernels": [3, 2], "strides": [2, 1]}, 2, "generic"),
])
def test_exact_rank_crosscheck_Q_Fp_float(spec, r, kind):
    """At the same (dyadic-rational) point: rank over Q == rank over F_p == numerical SVD rank."""
    a, c, th, X = _point(spec, r, kind, n=2 * 6 + 4, seed=4)
    rq = N.rank_rational(N.jacobian_rational(a, th, X, c))
    rp = N.rank_mod_p(N.jacobian_mod_p(a, th, X, c))
    rn = N.numerical_rank(N.jacobian(a, th, X, c))["rank"]
    assert rq == rp == rn
    # the exact Jacobians agree with the float one
    Jq = N.jacobian_rational(a, th, X, c).astype(float)
    assert np.allclose(Jq, N.jacobian(a, th, X, c), rtol=1e-12, atol=1e-12)
    # and at a dead-neuron / zero point all three drop together
    th0 = singular.kill_neuron(a, th, 1, 0) if a.kind == "mlp" else np.zeros_like(th)
    rq0 = N.rank_rational(N.jacobian_rational(a, th0, X, c))
    assert rq0 == N.rank_mod_p(N.jacobian_mod_p(a, th0, X, c)) == N.numerical_rank(N.jacobian(a, th0, X, c))["rank"]
    assert rq0 < rq


def test_equilibration_fixes_deep_high_degree_rank():
    """Spec deviation: the raw SVD rank (tol 1e-8 s_max) of a depth-3, r = 5 net underestimates the
    rank; after row/column equilibration it matches the exact rank mod p (= #params, certified)."""
    a, c, th, X = _point({"kind": "mlp", "widths": [3, 3, 3, 1]}, 5, n=200, seed=1)
    rep = dimension.dimension_report(a, c, X, th, exact_rows=52)
    assert rep["rank_exact_lb"] == rep["rank_numeric"] == 21 == rep["n_params"]
    assert rep["certified"]
    assert rep["rank_numeric_raw"] < 21


# ------------------------------------------------------------------------------ closed-form dims
@pytest.mark.parametrize("n,k,r", [(3, 5, 4), (5, 7, 3), (3, 2, 2), (4, 3, 2), (3, 4, 3), (2, 3, 3), (4, 2, 3)])
def test_monomial_shallow_equals_secant_veronese(n, k, r):
    want = N.secant_veronese_dim(n, r, k)
    a, c, th, X = _point({"kind": "mlp", "widths": [n, k, 1]}, r, "monomial", seed=n + k + r)
    J = N.jacobian(a, th, X, c)
    assert N.numerical_rank(J)["rank"] == want
    assert dimension.exact_rank_lower_bound(a, th, X, c) == want


def test_secant_closed_form_values():
    # Alexander-Hirschowitz exceptions are defective by one
    assert N.secant_veronese_dim(3, 4, 5) == 14 and N.secant_veronese_dim(5, 3, 7) == 34
    assert N.secant_veronese_dim(3, 4, 4) == 12 and N.secant_veronese_dim(3, 4, 6) == 15
    # r = 2: symmetric 4x4 matrices of rank <= 2: 4*2 - 1 = 7; full: 10
    assert N.secant_veronese_dim(4, 2, 2) == 7 and N.secant_veronese_dim(4, 2, 5) == 10


@pytest.mark.parametrize("n,k", [(3, 2), (4, 3), (2, 2), (3, 1)])
def test_generic_quadratic_closed_form(n, k):
    a, c, th, X = _point({"kind": "mlp", "widths": [n, k, 1]}, 2, seed=10 * n + k)
    want = N.quadratic_generic_dim(n, k)
    assert N.numerical_rank(N.jacobian(a, th, X, c))["rank"] == want
    assert dimension.exact_rank_lower_bound(a, th, X, c) == want
    if 2 <= k < n:
        assert want < a.n_params  # degree 2 is too low for identifiability


def test_degree_support_and_ambient():
    assert N.degree_support([0, 0, 1, 1], 2) == [2, 3]
    assert N.degree_support([0, 1, 1, 1], 3) == list(range(1, 10))
    assert N.degree_support([0, 0, 0, 1], 3) == [9]
    assert N.ambient_dim({"kind": "mlp", "widths": [2, 2, 1]}, [0, 0, 1, 1]) == 7
    assert N.ambient_dim({"kind": "mlp", "widths": [3, 3, 2]}, [0, 1, 1, 1]) == 2 * (3 + 6 + 10)


def test_paper_hypersurface_example():
    """MLP (2,2,1), sigma = x^3 + x^2: 6 parameters, M is a hypersurface in R^7."""
    rep = dimension.architecture_dimension({"kind": "mlp", "widths": [2, 2, 1]}, 3, activation=[0, 0, 1, 1],
                                   n_points=40, seed=0)
    assert rep["ambient"] == 7 and rep["n_params"] == 6
    assert rep["rank_numeric"] == rep["rank_exact_lb"] == 6 and rep["certified"]


@pytest.mark.parametrize("widths,r", [([2, 2, 1], 3), ([3, 3, 2], 3), ([2, 2, 2, 1], 4), ([2, 3, 1], 4)])
def test_mlp_formula_vs_rank(widths, r):
    g = dimension.architecture_dimension({"kind": "mlp", "widths": widths}, r, "generic", n_points=80, seed=r)
    m = dimension.architecture_dimension({"kind": "mlp", "widths": widths}, r, "monomial", n_points=80, seed=r)
    P = g["n_params"]
    assert g["formula"] == P == sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    assert g["rank_numeric"] == g["rank_exact_lb"] == g["expected"] == P and g["certified"]
    assert m["formula"] == P - sum(widths[1:-1])
    assert m["rank_numeric"] == m["rank_exact_lb"] == min(m["formula"], m["ambient"]) and m["certified"]
    assert m["rank_numeric"] < g["rank_numeric"]


@pytest.mark.parametrize("k,s", [((3, 2), (2, 1)), ((3, 2), (1, 1)), ((4, 3, 2), (1, 2, 1)), ((5, 3), (2, 1))])
def test_cnn_dim_is_sum_of_filter_sizes_also_zero_padded(k, s):
    rep = dimension.architecture_dimension({"kind": "cnn", "kernels": k, "strides": s}, 3, n_points=60, seed=0)
    assert rep["formula"] == sum(k) == rep["rank_numeric"] == rep["rank_exact_lb"]
    assert rep["rank_zero_padded"] == rep["rank_zero_padded_exact_lb"] == sum(k)


@pytest.mark.parametrize("k,s", [((3, 2), (1, 1)), ((4, 3, 2), (1, 2, 1))])
def test_cnn_monomial_rank_is_sum_k_minus_the_scalings(k, s):
    """sigma = x^r: each pair of consecutive filters has a scaling symmetry, so dim M = sum k - (L - 1) (certified)."""
    rep = dimension.architecture_dimension({"kind": "cnn", "kernels": k, "strides": s}, 3, "monomial", n_points=60, seed=0)
    assert rep["formula"] == rep["upper_bound"] == sum(k) - (len(k) - 1) == rep["rank_exact_lb"] == rep["rank_numeric"]
    assert rep["certified"] and rep["rank_zero_padded_exact_lb"] <= sum(k) - (len(k) - 1)


def test_architecture_dimension_deterministic():
    spec = {"kind": "mlp", "widths": [2, 3, 1]}
    a = dimension.architecture_dimension(spec, 3, seed=5, n_points=30)
    b = dimension.architecture_dimension(spec, 3, seed=5, n_points=30)
    assert np.array_equal(a["singular_values"], b["singular_values"]) and np.array_equal(a["coeffs"], b["coeffs"])
    assert not np.array_equal(a["coeffs"], dimension.architecture_dimension(spec, 3, seed=6, n_points=30)["coeffs"])


# --------------------------------------------------------------------------- identifiability (E3)
def test_permutations_are_symmetries_and_orbit_distance_finds_them():
    a, c, th, X = _point({"kind": "mlp", "widths": [2, 3, 2, 1]}, 3, n=20, seed=7)
    th2 = identifiability.mlp_permute(a, th, [[2, 0, 1], [1, 0]])
    assert np.allclose(N.forward(a, th2, X, c), N.forward(a, th, X, c), rtol=1e-12, atol=1e-12)
    assert not np.allclose(th2, th)
    d, perms = identifiability.orbit_distance(a, th2, th)
    assert d < 1e-14
    d_other, _ = identifiability.orbit_distance(a, th + 0.1, th)
    assert d_other > 0.05


def test_monomial_scaling_symmetry_gives_infinite_fiber():
    a, c, th, X = _point({"kind": "mlp", "widths": [2, 2, 1]}, 3, "monomial", n=20, seed=8)
    t = 1.7
    th2 = th.copy()
    th2[0:2] *= t        # incoming weights of neuron 0
    th2[4] /= t ** 3     # its outgoing weight
    assert np.allclose(N.forward(a, th2, X, c), N.forward(a, th, X, c), rtol=1e-12, atol=1e-12)
    assert identifiability.orbit_distance(a, th2, th)[0] > 0.1  # not a permutation: the fiber is not finite


def test_generic_identifiability_tiny_mlp():
    """(2,2,1), generic cubic: every converged LM solution of phi(W') = phi(W*) is a permutation of W*."""
    a, c, th, X = _point({"kind": "mlp", "widths": [2, 2, 1]}, 3, n=40, seed=0)
    rep = identifiability.fiber_report(a, c, X, th, n_starts=8, seed=1, max_nfev=150)
    assert rep["n_converged"] >= 2
    assert rep["n_other_clusters"] == 0 and 1 <= rep["n_symmetric_clusters"] <= 2 == rep["orbit_size"]
    assert rep["max_orbit_dist"] < 1e-8


def test_monomial_fibers_leave_the_permutation_orbit():
    """The x^r control of C1f: at the same W* and inputs, LM solutions spread over the scaling continuum."""
    a, c, th, X = _point({"kind": "mlp", "widths": [2, 2, 1]}, 3, n=40, seed=0)
    mono = N.activation_coeffs(3, "monomial")
    rep = identifiability.fiber_report(a, mono, X, th, n_starts=8, seed=1, max_nfev=150)
    assert rep["n_converged"] >= 2 and rep["n_other_clusters"] >= 1


def test_generic_identifiability_tiny_cnn():
    a, c, th, X = _point({"kind": "cnn", "kernels": [3, 2], "strides": [2, 1]}, 2, n=40, seed=0)
    rep = identifiability.fiber_report(a, c, X, th, n_starts=6, seed=1, max_nfev=150)
    assert rep["n_converged"] >= 2 and rep["n_clusters"] == 1 == rep["n_symmetric_clusters"]


# ------------------------------------------------------------------------------ singularities (E4)
def test_mlp_dead_neuron_rank_drop_equals_subnetwork_rank():
    a, c, th, X = _point({"kind": "mlp", "widths": [3, 4, 1]}, 3, n=60, seed=3)
    rep = singular.mlp_subnetwork_report(a, c, X, th, layer=1, neuron=2)
    assert rep["rank_numeric"] == rep["rank_exact_lb"] == rep["rank_sub"] == 12 < rep["n_params"] == 16
    sub, ths = singular.remove_neuron(a, singular.kill_neuron(a, th, 1, 2), 1, 2)
    full, th_back = singular.embed_dead_neuron(sub, ths, 1, 2)
    assert full.widths == a.widths and np.array_equal(th_back, singular.kill_neuron(a, th, 1, 2))


def test_cnn_shift_vectors_integrality():
    assert points.cnn_shift_vectors(N.cnn_arch([3, 2], [1, 1])) == [(-1, 1), (1, -1)]
    assert points.cnn_shift_vectors(N.cnn_arch([3, 2], [2, 1])) == [(-2, 1), (2, -1)]
    assert points.cnn_shift_vectors(N.cnn_arch([2, 2], [2, 1])) == []  # |t_1| <= 1 cannot cancel 2 t_2
    a = N.cnn_arch([3, 2], [1, 1])
    assert points.cnn_shift_mask(a, (-1, 1)).tolist() == [False, True, True, True, False]
    with pytest.raises(ValueError):
        points.shift_cnn_params(a, np.ones(5), (-1, 1))


def test_cnn_node_spec_example():
    """W = ([0,a,b],[c,0]), W' = ([a,b,0],[0,c]): same function, two tangent spaces (rank 7 > 5)."""
    a = N.cnn_arch([3, 2], [1, 1])
    rng = np.random.default_rng(0)
    c = N.activation_coeffs(3, rng=rng)
    X = points.sample_inputs(40, 4, rng)
    A, B, C = 0.7, -1.1, 0.9
    th = np.array([0, A, B, C, 0.0])
    assert np.array_equal(points.shift_cnn_params(a, th, (-1, 1)), [A, B, 0, 0, C])
    rep = singular.cnn_node_report(a, c, X, th, (-1, 1))
    assert rep["max_abs_diff"] < 1e-12
    assert rep["rank_W"] == rep["rank_W_shift"] == 5
    assert rep["rank_joint"] == rep["rank_joint_exact_lb"] == 7 > rep["sum_k"]


def test_cnn_symmetric_pair_is_no_node():
    """C4's control: W and its x^r-symmetric image compute the same function with one tangent space."""
    a = N.cnn_arch([3, 2], [1, 1])
    rng = np.random.default_rng(0)
    X = points.sample_inputs(40, 4, rng)
    th = np.array([0, 0.75, -1.25, 0.5, 0.0])
    th2 = singular.cnn_rescale(a, th, 3)
    assert np.array_equal(th2, [0, 1.5, -2.5, 0.5 / 8, 0.0])
    rep = singular.cnn_symmetric_pair_report(a, 3, X, th)
    assert rep["max_abs_diff"] < 1e-12 and rep["rank_joint"] == rep["rank_joint_exact_lb"] == rep["rank_W"] < rep["sum_k"]


# ------------------------------------------------------------------------- critical exposure (E5)
def test_mlp_subnetwork_critical_point_is_full_critical_point():
    rng = np.random.default_rng(13)
    c = N.activation_coeffs(3, rng=rng)
    X = points.sample_inputs(60, 2, rng)
    Y = rng.standard_normal((60, 1))
    rep = training.mlp_critical_exposure([2, 3, 1], c, X, Y, seed=0)
    assert rep["converged"] and rep["full_critical"] and not rep["not_critical"]
    assert rep["grad_dead_max"] == rep["grad_exposed_max"] == 0.0
    assert rep["grad_alive_diff"] < 1e-12 and rep["loss_full"] == pytest.approx(rep["loss_sub"], rel=1e-12)


def test_cnn_subnetwork_critical_point_is_not_full_critical_point():
    rng = np.random.default_rng(12)
    c = N.activation_coeffs(3, rng=rng)
    X = points.sample_inputs(60, 4, rng)
    Y = rng.standard_normal((60, 1))
    rep = training.cnn_critical_exposure([3, 2], [1, 1], c, X, Y, seed=0)
    assert rep["converged"] and rep["grad_sub_norm"] < 1e-8
    assert rep["not_critical"] and rep["grad_zeroed_max"] == rep["grad_exposed_max"] > 1e-4 and not rep["full_critical"]


# ------------------------------------------------------------------------------- sparsity bias (E6)
def test_gd_decreases_loss_and_trial_reports():
    a = N.mlp_arch([2, 3, 1])
    rng = np.random.default_rng(0)
    c = np.array([0.0, 1.0, 0.5, 0.3])
    teacher = singular.kill_neuron(a, points.init_params(a, rng), 1, 2)
    X = points.sample_inputs(50, 2, rng)
    Y = N.forward(a, teacher, X, c)
    th0 = points.init_params(a, rng, 0.3)
    res = training.gd_train(a, th0, X, Y, c, lr=0.02, n_steps=300)
    assert not res["diverged"] and res["loss"] < training.mse_loss_and_grad(a, th0, X, Y, c)[0]
    tr = training.sparsity_bias_trial(a, c, X, teacher, seed=0, lr=0.02, n_steps=200)
    assert set(tr) == {"loss", "diverged", "min_rel", "n_sparse", "sparse"} and 0 <= tr["min_rel"] <= 1


# ------------------------------------------------------------------- evaluate step: claim metrics
def _tables(gen_exact=6, node_diff=0.0, mlp_full_critical=True):
    """Hand-made tables in the shape the steps write: one MLP (2,2,1) and one CNN (3,2; 1,1) at r = 3."""
    import pandas as pd

    dims = pd.DataFrame([
        dict(arch="mlp(2,2,1)", kind="mlp", activation="generic", sigma="generic", degree=3, n_params=6, n_hidden=2,
             ambient=9, ambient_generic=9, ambient_monomial=4, formula=6, upper_bound=6, rank_numeric=gen_exact, rank_exact_lb=gen_exact, certified=gen_exact == 6,
             rank_zero_padded=np.nan, rank_zero_padded_exact_lb=np.nan),
        dict(arch="mlp(2,2,1)", kind="mlp", activation="monomial", sigma="x^3", degree=3, n_params=6, n_hidden=2,
             ambient=4, ambient_generic=9, ambient_monomial=4, formula=4, upper_bound=4, rank_numeric=4, rank_exact_lb=4, certified=True,
             rank_zero_padded=np.nan, rank_zero_padded_exact_lb=np.nan),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", activation="generic", sigma="generic", degree=3, n_params=5, n_hidden=2,
             ambient=34, ambient_generic=34, ambient_monomial=4, formula=5, upper_bound=5, rank_numeric=5, rank_exact_lb=5, certified=True,
             rank_zero_padded=5, rank_zero_padded_exact_lb=5),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", activation="monomial", sigma="x^3", degree=3, n_params=5, n_hidden=2,
             ambient=4, ambient_generic=34, ambient_monomial=4, formula=4, upper_bound=4, rank_numeric=4, rank_exact_lb=4, certified=True,
             rank_zero_padded=4, rank_zero_padded_exact_lb=4),
        dict(arch="mlp(2,2,1)", kind="mlp", activation="monomial_perturbed", sigma="x^3 + 0.1x", degree=3, n_params=6,
             n_hidden=2, ambient=9, ambient_generic=9, ambient_monomial=4, formula=6, upper_bound=6, rank_numeric=6,
             rank_exact_lb=6, certified=True, rank_zero_padded=np.nan, rank_zero_padded_exact_lb=np.nan)])
    singular = pd.DataFrame([
        dict(arch="mlp(2,2,1)", kind="mlp", degree=3, n_params=6, point="dead_neuron", rank_generic=6, rank_numeric=3),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", degree=3, n_params=5, point="node", sum_k=5, max_abs_diff=node_diff,
             rank_joint=7, rank_joint_exact_lb=7),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", degree=3, n_params=5, point="symmetric_pair", sum_k=5,
             max_abs_diff=0.0, rank_joint=4, rank_joint_exact_lb=4),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", degree=3, n_params=5, point="random_partner", sum_k=5,
             max_abs_diff=2.8, rank_joint=10, rank_joint_exact_lb=10)])
    fibers = pd.DataFrame([
        dict(arch="mlp(2,2,1)", kind="mlp", n_converged=3, n_clusters=2, n_symmetric_clusters=2, n_other_clusters=0),
        dict(arch="mlp(3,3,3,1)", kind="mlp", n_converged=0, n_clusters=0, n_symmetric_clusters=0, n_other_clusters=0),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", n_converged=4, n_clusters=1, n_symmetric_clusters=1, n_other_clusters=0)])
    critical = pd.DataFrame([
        dict(dataset=0, kind="mlp", converged=True, grad_exposed_max=0.0, full_critical=mlp_full_critical, not_critical=False),
        dict(dataset=1, kind="mlp", converged=False, grad_exposed_max=0.0, full_critical=False, not_critical=False),
        dict(dataset=0, kind="cnn", converged=True, grad_exposed_max=0.3, full_critical=False, not_critical=True),
        dict(dataset=1, kind="cnn", converged=False, grad_exposed_max=1e9, full_critical=False, not_critical=True)])
    sparsity = pd.DataFrame([
        dict(seed=0, kind="mlp", sparse=True, diverged=False), dict(seed=0, kind="cnn", sparse=False, diverged=False),
        dict(seed=1, kind="mlp", sparse=True, diverged=True), dict(seed=1, kind="cnn", sparse=False, diverged=False)])
    return dims, singular, fibers, critical, sparsity


def _verdicts(measured):
    import copy

    from workflow.core import claims as claims_mod
    from workflow.core.params import read_yaml
    from workflow.papers.neuromanifolds import evaluate

    spec = copy.deepcopy(read_yaml(evaluate.CLAIMS))
    for claim in spec["claims"]:
        claim["units"] = 1  # the tiny table has one unit per check
        claim.pop("nulls", None)
        if claim.pop("control", None):  # judged here on the given values alone, whatever they stand for
            claim["no_control"] = "the hand-made table is judged on its own"
    return {c["id"]: c["verdict"] for c in claims_mod.evaluate(spec, measured, "default")["claims"]}


def test_evaluate_measure_on_a_hand_made_table():
    from workflow.papers.neuromanifolds.evaluate import measure

    m = measure(*_tables())
    assert m["c1_exact_rank_gap"] == [0.0] and m["c1_numeric_rank_gap"] == [0.0]
    assert m["c1_fiber_other_clusters"] == [0.0]            # the architecture with no converged start is left out
    assert m["c2_exact_rank_gap"] == [0.0] and m["c2_strictly_below_generic"] == [1.0]
    assert m["c3_exact_rank_gap_zero_padded"] == [0.0] and m["c3_cnn_fiber_clusters"] == [1.0]
    assert m["c4_mlp_dead_rank_drop"] == [3.0] and m["c4_cnn_node_joint_rank_excess"] == [2.0]
    assert m["c5_mlp_grad_dead_max"] == [0.0, 0.0]          # every data set
    assert m["c5_mlp_full_critical"] == [1.0] and m["c5_cnn_not_critical"] == [1.0]  # converged fits only
    assert m["info_c6_sparse_mlp_minus_cnn"] == [1.0]       # seed 1 left out: its MLP run diverged
    v = _verdicts(m)
    assert all(v[c] == "pass" for c in ("C1", "C1f", "C2", "C3", "C3f", "C4", "C4s", "C5", "C5s")) and v["C6"] == "info"


def test_every_control_fails_its_claim_on_a_hand_made_table():
    """The controls, by the same measure: x^r fails C1 and C3 (and generic sigma fails C2), the symmetric pair
    fails C4, the MLP subnetworks fail C5 and the CNN ones C5s; fibers of x^r with off-orbit clusters fail C1f/C3f."""
    import pandas as pd

    from workflow.papers.neuromanifolds.evaluate import control_measures

    dims, singular, fibers, critical, sparsity = _tables()
    mono_fibers = pd.DataFrame([
        dict(arch="mlp(2,2,1)", kind="mlp", n_converged=5, n_clusters=5, n_symmetric_clusters=0, n_other_clusters=5),
        dict(arch="cnn(k=3,2;s=1,1)", kind="cnn", n_converged=4, n_clusters=4, n_symmetric_clusters=0, n_other_clusters=4)])
    c = control_measures(dims, singular, fibers, mono_fibers, critical, sparsity)
    assert c["monomial_sigma"]["c1_exact_rank_gap"] == [2.0] and c["monomial_sigma"]["c3_exact_rank_gap"] == [1.0]
    assert c["generic_sigma"]["c2_exact_rank_gap"] == [2.0]  # |min(6 - 2, 4) - 6| and c["generic_sigma"]["c2_strictly_below_generic"] == [0.0]
    assert c["symmetric_pair"]["c4_cnn_node_joint_rank_excess"] == [-1.0]
    assert c["mlp_subnetwork"]["c5_cnn_not_critical"] == [0.0]
    assert c["cnn_subnetwork"]["c5_mlp_grad_dead_max"] == [0.3, 1e9] and c["cnn_subnetwork"]["c5_mlp_full_critical"] == [0.0]
    v = {name: _verdicts(m) for name, m in c.items()}
    assert v["monomial_sigma"]["C1"] == v["monomial_sigma"]["C1f"] == v["monomial_sigma"]["C3"] == "fail"
    assert v["monomial_sigma"]["C3f"] == v["generic_sigma"]["C2"] == v["symmetric_pair"]["C4"] == "fail"
    assert v["mlp_subnetwork"]["C5"] == v["cnn_subnetwork"]["C5s"] == "fail"
    # the placebos: x^r perturbed has the generic rank (C2 fails); a random partner has a joint rank above sum k
    # like the node (C4's check cannot tell them apart: the placebo passes)
    assert c["placebo_homogeneity"]["c2_exact_rank_gap"] == [2.0] and c["placebo_homogeneity"]["c2_strictly_below_generic"] == [0.0]
    assert c["placebo_preimage"]["c4_cnn_node_joint_rank_excess"] == [5.0]
    assert v["placebo_homogeneity"]["C2"] == "fail" and v["placebo_preimage"]["C4"] == "pass"


def test_evaluate_measure_detects_failures():
    from workflow.papers.neuromanifolds.evaluate import measure

    m = measure(*_tables(gen_exact=5, node_diff=1e-3, mlp_full_critical=False))
    assert m["c1_exact_rank_gap"] == [1.0]                  # rank 5 < min(#params, ambient) = 6
    assert m["c2_strictly_below_generic"] == [1.0]          # 4 < 5 still
    assert m["c5_mlp_full_critical"] == [0.0]
    v = _verdicts(m)
    assert v["C1"] == "fail" and v["C4s"] == "fail" and v["C5s"] == "fail" and v["C3"] == "pass"


# ----------------------------------------------------------------------------------- what the steps share
def test_a_table_a_point_is_the_one_architecture_dimension_draws():
    """E3-E6 steps work at the point of a Table A row: random_point draws c, theta, X as architecture_dimension."""
    assert points.arch_spec([2, 3, 1]) == {"kind": "mlp", "widths": [2, 3, 1]}
    assert points.arch_spec({"kernels": [3, 2], "strides": [2, 1]}) == {"kind": "cnn", "kernels": [3, 2], "strides": [2, 1]}
    s = points.point_seed(2026, "mlp(2,3,1)", 3)
    assert s == points.point_seed(2026, "mlp(2,3,1)", 3) != points.point_seed(2026, "mlp(2,3,1)", 4)
    spec = points.arch_spec([2, 3, 1])
    arch, c, theta, X, _ = points.random_point(spec, 3, 20, s)
    rep = dimension.architecture_dimension(spec, 3, "generic", n_points=20, seed=s)
    assert np.array_equal(rep["coeffs"], c)
    assert rep["rank_numeric"] == N.numerical_rank(N.jacobian(arch, theta, X, c))["rank"]


def test_light_steps_do_not_load_scipy_optimize():
    """scipy.optimize (LM, Hungarian matching) is imported by the functions of E3 and E5 that use it, not at import."""
    import subprocess
    import sys

    probe = ("import sys, workflow.papers.neuromanifolds.ranks, workflow.papers.neuromanifolds.sparsity; "
             "print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
