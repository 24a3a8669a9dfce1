"""Tests for the ``hypergraph_sparsify`` core algorithms (hypergraph.py, balancing.py, methods.py, metrics.py).

Known answers are computed independently inside the tests (explicit loops over pairs / subsets,
numpy.linalg.pinv, networkx.stoer_wagner, closed-form resistances). Tiny sizes; run with OMP_NUM_THREADS=1.
"""

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from workflow.papers.hypergraph_sparsify import balancing as BAL
from workflow.papers.hypergraph_sparsify import hypergraph as HG
from workflow.papers.hypergraph_sparsify import methods as M
from workflow.papers.hypergraph_sparsify import metrics as MET


# ---------------------------------------------------------------------------------------------- helpers

def _rand_hyper(n, m, r, seed, wmax=5.0):
    rng = np.random.default_rng(seed)
    V = np.full((m, r), -1, dtype=np.int64)
    for i in range(m):
        s = rng.integers(2, r + 1)
        V[i, :s] = rng.choice(n, size=s, replace=False)
    return V, rng.uniform(1.0, wmax, size=m)


def _energy_loop(V, w, x):
    """Q_H(x) = sum_e w_e max_{u,v in e} (x_u - x_v)^2 by explicit pair loops."""
    tot = 0.0
    for row, we in zip(V, w):
        e = [int(v) for v in row if v >= 0]
        tot += we * max((x[a] - x[b]) ** 2 for a in e for b in e)
    return tot


def _cut_loop(V, w, S):
    return sum(we for row, we in zip(V, w) if len({int(v) in S for v in row if v >= 0}) == 2)


def _all_cut_vectors(n):
    """Indicator vectors of all proper subsets S with vertex n-1 not in S."""
    cols = [[1.0 if (c >> i) & 1 else 0.0 for i in range(n - 1)] + [0.0] for c in range(1, 2 ** (n - 1))]
    return np.array(cols).T


def _graph_laplacian_loop(V, w, n):
    L = np.zeros((n, n))
    for row, we in zip(V, w):
        a, b = int(row[0]), int(row[1])
        L[a, a] += we
        L[b, b] += we
        L[a, b] -= we
        L[b, a] -= we
    return L


def _connected_graph(n, m, seed):
    rng = np.random.default_rng(seed)
    V = np.array([[i, i + 1] for i in range(n - 1)] + [list(rng.choice(n, 2, replace=False))
                                                      for _ in range(m - n + 1)], dtype=np.int64)
    return V, rng.uniform(1.0, 3.0, size=len(V))


# ------------------------------------------------------------------------------------------------ data

def test_generator_structure_and_determinism():
    H = HG.planted_hypergraph_stream(n=20, m=600, r=4, seed=3, n_bridges=5)
    V, sz, w = H["verts"], H["sizes"], H["weights"]
    assert V.shape == (600, 4)
    assert np.array_equal((V >= 0).sum(axis=1), sz) and sz.min() >= 2 and sz.max() <= 4
    assert all((row[:s] >= 0).all() and (row[s:] == -1).all() for row, s in zip(V, sz))
    assert all(len(set(row[:s])) == s for row, s in zip(V, sz))
    assert w.min() >= 1.0 and w.max() <= 10.0
    side = H["side"]
    crossing = np.array([len(set(side[row[:s]])) == 2 for row, s in zip(V, sz)])
    assert np.array_equal(crossing, H["is_bridge"]) and H["is_bridge"].sum() == 5
    comm = H["community"]
    one_comm = np.array([len(set(comm[row[:s]])) == 1 for row, s in zip(V, sz)])
    assert 0.75 < one_comm[~H["is_bridge"]].mean() <= 0.95  # p_in = 0.85 plus side-draws that stay in one
    H2 = HG.planted_hypergraph_stream(n=20, m=600, r=4, seed=3, n_bridges=5)
    assert all(np.array_equal(H[k], H2[k]) for k in ("verts", "weights", "is_bridge"))
    H3 = HG.planted_hypergraph_stream(n=20, m=600, r=4, seed=3, n_bridges=5, order="bridges_last")
    assert H3["is_bridge"][-5:].all() and not H3["is_bridge"][:-5].any()
    G = HG.planted_hypergraph_stream(n=12, m=100, r=2, seed=0)
    assert (G["sizes"] == 2).all()


def test_coalesce_preserves_energy():
    V, w = _rand_hyper(8, 60, 3, 0)
    V = np.vstack([V, V[:20, ::-1]])  # reversed rows: padding first -> must still match after sorting
    V[60:] = np.sort(np.where(V[60:] < 0, 99, V[60:]), axis=1)
    V[V == 99] = -1
    w = np.concatenate([w, w[:20]])
    Vc, wc = HG.coalesce(V, w)
    assert Vc.shape[0] <= 60 and np.isclose(wc.sum(), w.sum())
    X = np.random.default_rng(1).standard_normal((8, 5))
    assert np.allclose(HG.hyper_energy(Vc, wc, X), HG.hyper_energy(V, w, X))


# ------------------------------------------------------------------------------------------- core maths

def test_energy_matches_pair_loop():
    V, w = _rand_hyper(9, 40, 4, 1)
    X = np.random.default_rng(2).standard_normal((9, 6))
    want = np.array([_energy_loop(V, w, X[:, j]) for j in range(6)])
    assert np.allclose(HG.hyper_energy(V, w, X, chunk=7), want)
    assert np.isclose(HG.hyper_energy(V, w, X[:, 0]), want[0])


def test_energy_gradient_matches_finite_differences():
    V, w = _rand_hyper(7, 30, 3, 4)
    X = np.random.default_rng(5).standard_normal((7, 3))
    Q, G = HG.hyper_energy_grad(V, w, X, chunk=8)
    assert np.allclose(Q, HG.hyper_energy(V, w, X))
    h = 1e-6
    for i in range(7):
        E = np.zeros_like(X)
        E[i] = h
        fd = (HG.hyper_energy(V, w, X + E) - HG.hyper_energy(V, w, X - E)) / (2 * h)
        assert np.allclose(G[i], fd, rtol=1e-4, atol=1e-5)


def test_rank3_cut_equals_clique_expansion_cut():
    V, w = _rand_hyper(7, 25, 3, 6)
    L = HG.clique_laplacian(V, w, 7, scale="cut")
    for S in itertools.chain.from_iterable(itertools.combinations(range(7), k) for k in range(1, 4)):
        x = np.zeros(7)
        x[list(S)] = 1.0
        assert np.isclose(x @ L @ x, _cut_loop(V, w, set(S)))
        assert np.isclose(HG.hyper_energy(V, w, x), _cut_loop(V, w, set(S)))


def test_min_cut_matches_bruteforce_and_networkx():
    V, w = _rand_hyper(9, 30, 3, 7)
    brute = min(_cut_loop(V, w, set(S)) for k in range(1, 9) for S in itertools.combinations(range(9), k))
    assert np.isclose(MET.min_cut_value(V, w, 9), brute)
    assert np.isclose(MET.brute_force_min_cut(V, w, 9), brute)
    Vg, wg = _connected_graph(10, 30, 8)
    G = nx.Graph()
    for (a, b), we in zip(Vg, wg):
        G.add_edge(int(a), int(b), weight=G.get_edge_data(int(a), int(b), {"weight": 0.0})["weight"] + we)
    assert np.isclose(MET.min_cut_value(Vg, wg, 10), nx.stoer_wagner(G)[0])
    assert MET.min_cut_value(np.array([[0, 1], [2, 3]]), np.ones(2), 4) == 0.0  # disconnected
    V5, w5 = _rand_hyper(8, 20, 5, 9)  # rank 5 -> brute force inside
    brute5 = min(_cut_loop(V5, w5, set(S)) for k in range(1, 8) for S in itertools.combinations(range(8), k))
    assert np.isclose(MET.min_cut_value(V5, w5, 8), brute5)


def test_effective_resistances_known_values():
    path = HG.pair_laplacian(np.array([0, 1, 2]), np.array([1, 2, 3]), np.ones(3), 4)
    R = HG.effective_resistances(path)
    assert np.isclose(R[0, 3], 3.0, rtol=1e-6) and np.isclose(R[1, 2], 1.0, rtol=1e-6)
    par = HG.pair_laplacian(np.array([0, 0]), np.array([1, 1]), np.array([1.0, 3.0]), 2)
    assert np.isclose(HG.effective_resistances(par)[0, 1], 0.25, rtol=1e-6)
    V, w = _connected_graph(8, 20, 3)
    L = _graph_laplacian_loop(V, w, 8)
    P = np.linalg.pinv(L)
    d = np.diag(P)
    assert np.allclose(HG.effective_resistances(L), d[:, None] + d[None, :] - 2 * P, rtol=1e-6, atol=1e-9)


def test_space_bits_formula():
    assert HG.space_bits([2, 3, 5], 40) == (2 + 3 + 5) * 6 + 3 * 64
    assert HG.space_bits([2], 2) == 2 * 1 + 64
    assert HG.space_bits([], 40) == 0


# ------------------------------------------------------------------------------------------- balancing

def test_balance_weights_conservation_balance_and_importance_bound():
    H = HG.planted_hypergraph_stream(n=12, m=300, r=4, seed=1, k=2, n_bridges=2)
    V, w, n = H["verts"], H["weights"], 12
    out = BAL.balance_weights(V, w, n, gamma=2.0, max_rounds=200)
    z, s = out["z"], out["importance"]
    U, W, valid = HG.hyperedge_pairs(V)
    assert (z >= -1e-12).all() and (z[~valid] == 0).all() and np.allclose(z.sum(axis=1), w)
    assert out["frac_unbalanced"] == 0.0
    # independent resistances of G_z from pinv
    Lz = np.zeros((n, n))
    for i in range(len(V)):
        for j in np.flatnonzero(valid[i]):
            a, b = U[i, j], W[i, j]
            Lz[[a, b], [a, b]] += z[i, j]
            Lz[a, b] -= z[i, j]
            Lz[b, a] -= z[i, j]
    P = np.linalg.pinv(Lz)
    Rz = np.diag(P)[:, None] + np.diag(P)[None, :] - 2 * P
    Rp = np.where(valid, Rz[np.where(valid, U, 0), np.where(valid, W, 0)], -np.inf)
    assert np.allclose(s, w * Rp.max(axis=1), rtol=1e-5)
    # gamma-balanced: every positive pair has R >= max R / gamma
    Rpos = np.where(z > 1e-12 * w[:, None], Rp, np.inf)
    assert (Rpos.min(axis=1) >= Rp.max(axis=1) / 2.0 * (1 - 1e-6)).all()
    # sum of importances <= gamma * (n - 1) (sum_e sum_uv z R = tr(L^+ L) = n - 1)
    assert s.sum() <= 2.0 * (n - 1) * (1 + 1e-6)
    # importance bounds each hyperedge's share of the energy, for any x
    X = np.random.default_rng(0).standard_normal((n, 50))
    Q = HG.hyper_energy(V, w, X)
    for i in range(0, len(V), 7):
        qi = HG.hyper_energy(V[i:i + 1], w[i:i + 1], X)
        assert (qi <= s[i] * Q * (1 + 1e-6)).all()


def test_local_balance_against_direct_resistances():
    Vp, wp = _connected_graph(9, 25, 5)
    Lp = _graph_laplacian_loop(Vp, wp, 9)
    lam = 1e-6
    K = np.linalg.inv(Lp + lam * np.eye(9))
    e = np.array([0, 3, 7, 8])
    we = 4.0
    z, R = BAL.local_balance(K[np.ix_(e, e)], we, gamma=1.5)
    assert np.isclose(z.sum(), we) and (z >= -1e-12).all()
    pairs = list(itertools.combinations(range(4), 2))
    L2 = Lp.copy()
    for (i, j), zij in zip(pairs, z):
        a, b = e[i], e[j]
        L2[[a, b], [a, b]] += zij
        L2[a, b] -= zij
        L2[b, a] -= zij
    P = np.linalg.pinv(L2)
    Rd = np.array([P[e[i], e[i]] + P[e[j], e[j]] - 2 * P[e[i], e[j]] for i, j in pairs])
    assert np.allclose(R, Rd, rtol=1e-4)
    assert R[z > 1e-12].min() >= R.max() / 1.5 * (1 - 1e-9)
    # pre-arrival variant: R is the prefix resistance; weight only on pairs with R >= max R / gamma
    z0, R0 = BAL.local_balance(K[np.ix_(e, e)], we, gamma=1.5, self_in_prefix=False)
    Pp = np.linalg.pinv(Lp)
    R0d = np.array([Pp[e[i], e[i]] + Pp[e[j], e[j]] - 2 * Pp[e[i], e[j]] for i, j in pairs])
    assert np.allclose(R0, R0d, rtol=1e-4) and np.isclose(z0.sum(), we)
    assert (z0[R0 < R0.max() / 1.5] == 0).all()


# -------------------------------------------------------------------------------------------- samplers

def test_offline_is_unbiased_expected_laplacian():
    V, w = _connected_graph(10, 80, 11)
    L = _graph_laplacian_loop(V, w, 10)
    p = M.offline_importance_sample(V, w, 10, rho=0.5, seed=0)["p"]
    assert 0.3 < (p < 1).mean()  # sampling actually happens
    acc = np.zeros((10, 10))
    reps = 600
    for sd in range(reps):
        out = M.offline_importance_sample(V, w, 10, rho=0.5, seed=sd)
        assert np.allclose(out["weight"], w[out["idx"]] / p[out["idx"]])
        acc += _graph_laplacian_loop(V[out["idx"]], out["weight"], 10)
    mean = acc / reps
    # independent per-entry standard error: Var(L_hat_ab) = sum_e (L_e)_ab^2 w_e^2 (1/p_e - 1)
    var = np.zeros((10, 10))
    for (a, b), we, pe in zip(V, w, p):
        Le = np.zeros((10, 10))
        Le[[a, b], [a, b]] = 1.0
        Le[a, b] = Le[b, a] = -1.0
        var += Le ** 2 * we ** 2 * (1 / pe - 1)
    se = np.sqrt(var / reps)
    assert np.all(np.abs(mean - L) <= 5 * se + 1e-9)
    assert np.linalg.norm(mean - L) < 0.1 * np.linalg.norm(L)


def test_online_exact_probabilities_seed_free_and_unbiased():
    H = HG.planted_hypergraph_stream(n=12, m=400, r=3, seed=2, k=2, n_bridges=2)
    V, w = H["verts"], H["weights"]
    outs = [M.online_sparsify(V, w, 12, rho=1.0, seed=sd, prefix="exact") for sd in range(300)]
    p = outs[0]["p"]
    assert all(np.array_equal(o["p"], p) for o in outs[1:4])  # depends on the stream only
    assert 0.3 < (p < 1).mean() and (p > 0).all()
    x = np.random.default_rng(0).standard_normal((12, 4))
    Q = HG.hyper_energy(V, w, x)
    est = np.array([HG.hyper_energy(V[o["idx"]], o["weight"], x) for o in outs])
    se = est.std(axis=0) / math.sqrt(len(outs))
    assert (np.abs(est.mean(axis=0) - Q) < 4.5 * se).all()
    assert (np.abs(est.mean(axis=0) / Q - 1) < 0.05).all()


def test_uniform_reservoir_inclusion_is_uniform():
    m, k, reps = 50, 10, 3000
    cnt = np.zeros(m)
    for sd in range(reps):
        idx = M.uniform_reservoir(m, k, sd)
        assert idx.size == k and np.unique(idx).size == k
        cnt[idx] += 1
    freq = cnt / reps
    se = math.sqrt(0.2 * 0.8 / reps)
    assert np.abs(freq - k / m).max() < 4.5 * se


def test_online_keeps_bridges_and_uniform_loses_them():
    H = HG.planted_hypergraph_stream(n=20, m=3000, r=3, seed=0, order="bridges_last")
    res = M.run_method("online-exact", H, seed=0, rho=10)
    assert res["bridges_kept"] == 6 and res["frac_stored"] < 0.6
    fam = MET.make_test_family(H, 0, n_gauss=20, n_unions=10, n_eig=5)
    ev = MET.evaluate_sparsifier(H, res["idx"], res["weight"], fam["X"], ascent_steps=0)
    assert ev["bisection_err"] < 1e-9 and np.isclose(ev["min_cut_ratio"], 1.0)
    uni = M.run_method("uniform", H, seed=0, budget=300)
    evu = MET.evaluate_sparsifier(H, uni["idx"], uni["weight"], fam["X"], ascent_steps=0)
    assert evu["bisection_err"] > 0.5


def test_sparsifier_error_bruteforce_over_all_cuts():
    H = HG.planted_hypergraph_stream(n=10, m=1500, r=3, seed=4, k=2, n_bridges=2)
    V, w = H["verts"], H["weights"]
    res = M.run_method("online-exact", H, seed=0, rho=8)
    assert res["stored"] < 0.5 * len(V)
    Vh, wh = V[res["idx"]], res["weight"]
    X = _all_cut_vectors(10)
    brute = max(abs(_cut_loop(Vh, wh, set(np.flatnonzero(X[:, j]))) / _cut_loop(V, w, set(np.flatnonzero(X[:, j])))
                    - 1) for j in range(X.shape[1]))
    ev = MET.evaluate_sparsifier(H, res["idx"], res["weight"], X, ascent_steps=0)
    assert np.isclose(ev["eps_family"], brute)
    assert brute < 0.5  # a (1 +- eps) cut sparsifier at a moderate rate
    assert ev["min_cut"] == pytest.approx(min(_cut_loop(V, w, set(np.flatnonzero(X[:, j])))
                                              for j in range(X.shape[1])))


def test_graph_exact_eps_and_ascent():
    V, w = _connected_graph(12, 60, 13)
    L = _graph_laplacian_loop(V, w, 12)
    assert np.isclose(MET.graph_spectral_eps(L, 1.3 * L), 0.3)
    assert np.isclose(MET.graph_spectral_eps(L, 0.6 * L), 0.4)
    H = {"verts": V, "weights": w, "sizes": np.full(len(V), 2), "n": 12}
    out = M.offline_importance_sample(V, w, 12, rho=2.0, seed=0)
    Lh = _graph_laplacian_loop(V[out["idx"]], out["weight"], 12)
    # independent exact value: generalized eigenvalues of (L_hat, L) on range(L) via pinv square root
    vals, vecs = np.linalg.eigh(L)
    S = vecs[:, 1:] / np.sqrt(vals[1:])
    lam = np.linalg.eigvalsh(S.T @ Lh @ S)
    want = max(abs(lam.max() - 1), abs(1 - lam.min()))
    X = np.random.default_rng(0).standard_normal((12, 40))
    ev = MET.evaluate_sparsifier(H, out["idx"], out["weight"], X, ascent_steps=30, ascent_starts=5)
    assert np.isclose(ev["eps_exact"], want)
    assert ev["eps_family"] <= ev["eps_hat"] <= want + 1e-9
    assert ev["eps_hat"] > 0.9 * want  # the ascent gets close to the true worst direction


def test_store_all_is_exact_and_space_accounting():
    H = HG.planted_hypergraph_stream(n=16, m=1200, r=3, seed=5)
    sizes = H["sizes"]
    for meth, kw in [("store-all", {}), ("online-exact", {"rho": 5}), ("online-sketch", {"rho": 5}),
                     ("offline-is", {"rho": 5}), ("stream", {"rho": 5, "rho_reduce": 5, "block": 200}),
                     ("mr-only", {"rho_reduce": 5, "block": 200}), ("uniform", {"budget": 100})]:
        res = M.run_method(meth, H, seed=0, **kw)
        assert res["stored"] == res["idx"].size == res["weight"].size
        assert res["bits"] == int(sum(s * 4 + 64 for s in sizes[res["idx"]]))
        assert res["peak_stored"] >= res["stored"] and res["peak_bits"] >= res["bits"]
        assert res["log_stored"].max(initial=0) <= res["peak_stored"]
        assert res["bits_total"] == res["bits"] + res["sketch_bits"]
        assert np.all(np.diff(res["idx"]) > 0)
        if meth in ("online-exact", "online-sketch", "store-all"):
            assert np.all(np.diff(res["log_stored"]) >= 0) and res["log_stored"][-1] == res["stored"]
        if meth == "online-sketch":
            assert res["sketch_rows"] > 0 and res["sketch_bits"] == res["sketch_rows"] * (2 * 4 + 64)
    full = M.run_method("store-all", H)
    assert full["bits_frac"] == 1.0 and full["frac_stored"] == 1.0
    fam = MET.make_test_family(H, 0, n_gauss=10, n_unions=5, n_eig=3)
    ev = MET.evaluate_sparsifier(H, full["idx"], full["weight"], fam["X"], ascent_steps=2)
    assert ev["eps_hat"] < 1e-12 and ev["bisection_err"] < 1e-12 and np.isclose(ev["min_cut_ratio"], 1.0)
    with pytest.raises(ValueError):
        M.run_method("online-exact", H, rho=5, block=3)


def test_merge_and_reduce_bookkeeping():
    H = HG.planted_hypergraph_stream(n=16, m=1000, r=3, seed=6)
    V, w = H["verts"], H["weights"]
    # reduction rate so high that every p = 1: output must be exactly the input, once each
    out = M.stream_sparsify(V, w, 16, rho_reduce=1e12, block=64, pre_thin=False, seed=0)
    assert np.array_equal(out["idx"], np.arange(1000)) and np.allclose(out["weight"], w)
    B = 1000 // 64  # full blocks -> binary counter: B block reductions + (B - popcount(B)) merges
    assert out["reductions"] == B + B - bin(B).count("1")
    assert out["peak_stored"] == 1000
    thin = M.stream_sparsify(V, w, 16, rho=1e12, rho_reduce=1e12, block=64, seed=0)
    assert np.array_equal(thin["idx"], np.arange(1000)) and np.allclose(thin["weight"], w)
    # real reduction: memory stays well below m and the result is still a decent sparsifier
    red = M.stream_sparsify(V, w, 16, rho=3, rho_reduce=3, block=150, seed=0)
    assert red["peak_stored"] < 500 and red["reductions"] >= 1
    X = np.random.default_rng(0).standard_normal((16, 30))
    assert np.abs(HG.hyper_energy(V[red["idx"]], red["weight"], X) / HG.hyper_energy(V, w, X) - 1).max() < 0.6


def test_sliding_window_forgets_expired_and_is_exact_at_full_rate():
    H = HG.planted_hypergraph_stream(n=16, m=1500, r=3, seed=7)
    V, w = H["verts"], H["weights"]
    W = 400
    q = np.array([400, 700, 1100, 1500])
    full = M.sliding_window_sparsify(V, w, 16, W, rho=1e12, seed=0, query_times=q, recompute_every=100)
    ptr = full["snap_ptr"]
    for j, T in enumerate(q):
        ii = full["snap_idx"][ptr[j]:ptr[j + 1]]
        assert np.array_equal(ii, np.arange(T - W, T))  # exactly the window, nothing expired kept
        assert np.allclose(full["snap_weight"][ptr[j]:ptr[j + 1]], w[ii])
    thin = M.sliding_window_sparsify(V, w, 16, W, rho=5, seed=0, query_times=q, recompute_every=100)
    ptr = thin["snap_ptr"]
    for j, T in enumerate(q):
        ii = thin["snap_idx"][ptr[j]:ptr[j + 1]]
        assert ii.size and ii.min() >= T - W and ii.max() < T
        assert ii.size < 0.8 * W
    assert thin["peak_stored"] <= W
    ev = MET.evaluate_sliding(H, thin, ascent_steps=0, n_gauss=20, n_unions=10, n_eig=5)
    assert ev["eps_hat"].shape == (4,) and (ev["eps_hat"] < 0.6).all()
    assert np.allclose(ev["stored_frac_window"], np.diff(ptr) / W)


# ----------------------------------------------------------------------------------- evaluate step (claims)

def _table_rows():
    """A hand-made sparsify_eval table: families G (r = 2) and H3 (r = 3), one seed, m_small = 4, m_large = 32,
    with every method a claim or a control reads."""
    import pandas as pd

    rows = []
    for fam, r in (("G", 2), ("H3", 3)):
        for m in (4, 32):
            big = m == 32
            base = dict(family=fam, seed=0, r=r, m=m, n_bridges=6, min_cut_ratio=1.0, rep=0, order="random")

            def put(method, stored, eps, peak=None, order="random", **more):
                peak = stored if peak is None else peak
                rows.append(base | dict(method=method, order=order, stored=stored, peak_stored=peak, frac_stored=stored / m,
                                        peak_frac=peak / m, eps_hat=eps, eps_exact=eps + 0.05 if r == 2 else np.nan,
                                        time_s=0.0) | more)

            put("store-all", m, 0.0)
            put("online-exact", 4 if big else 2, 0.2, time_s=0.064)
            put("online-sketch", 4 if big else 2, 0.22)
            put("offline-is", 1, 0.3)  # flat in m: C2's control
            put("mr-only", 8 if big else 2, 0.1, peak=8 if big else 2)  # grows 4x: C2m's control
            for order in ("random", "bridges_last") if big else ("random",):
                put("stream", 3, 0.25, peak=3 if big else 2, order=order, min_cut_ratio=1.1, time_s=0.032, bridges_kept=6)
                put("online-shuffled", 4, 0.9, order=order, min_cut_ratio=2.0)
                for rep, e in enumerate((0.5, 1.0, 2.0)):  # uniform: median over reservoir seeds = 1.0
                    put("uniform", 3, e, order=order, rep=rep, min_cut_ratio=0.5, bridges_kept=rep)
                    put("uniform-online", 4, e + 0.5, order=order, rep=rep, min_cut_ratio=0.0)
    return pd.DataFrame(rows)


def _sliding_rows():
    import pandas as pd

    return pd.DataFrame([dict(family=f, seed=0, r=r, T=t, eps_hat=e, eps_hat_uniform=3 * e, stored_frac_window=s)
                         for f, r in (("G", 2), ("H3", 3)) for t, e, s in ((10, 0.1, 0.4), (20, 0.25, 0.3))])


def test_measure_units_and_values_from_a_hand_made_table():
    from workflow.papers.hypergraph_sparsify.evaluate import measure

    got = measure(_table_rows(), _sliding_rows(), m_small=4, m_large=32)
    # C1 only on hypergraphs (H3), C1g only on graphs (G): one unit each
    assert got["c1_eps_hat_online_exact"] == [0.2] and got["c1_frac_online_exact"] == [4 / 32]
    assert got["c1_eps_hat_stream"] == [0.25] and got["c1_peak_frac_stream"] == [3 / 32]
    assert got["c1g_eps_exact_online_exact"] == [0.25] and got["c1g_eps_exact_stream"] == [0.3]
    # C2: one unit per (family, seed); stream's ratio is of PEAK memory
    assert got["c2_ratio_store_all"] == [8.0, 8.0]
    assert got["c2_ratio_online_exact"] == [2.0, 2.0]
    assert got["c2_peak_ratio_stream"] == [1.5, 1.5]
    assert np.allclose(got["c2_stream_minus_online_ratio"], [-0.5, -0.5])
    # C3: median over reservoir seeds (1.0) / stream (0.25), both orders
    assert np.allclose(got["c3_uniform_over_stream_random"], [4.0, 4.0])
    assert np.allclose(got["c3_uniform_over_stream_bridges_last"], [4.0, 4.0])
    assert np.allclose(got["c4_mincut_dev_stream"], [0.1, 0.1])
    assert np.allclose(got["info_ms_per_arrival_online_exact"], [2.0, 2.0])
    assert got["info_bridges_kept_stream"] == [1.0, 1.0] and got["info_bridges_kept_uniform"] == [1 / 6, 1 / 6]
    # C5: worst query per instance, hypergraphs only
    assert got["c5_sliding_eps_hat_max"] == [0.25] and got["c5_sliding_stored_frac_max"] == [0.4]


def test_control_as_method_puts_the_control_in_the_methods_place():
    from workflow.papers.hypergraph_sparsify.evaluate import control_as_method

    t = _table_rows()
    got = control_as_method(t, {"online-exact": "uniform-online", "stream": "uniform"})
    assert not got.method.isin(["uniform", "uniform-online"]).any()
    assert (got.method == "online-exact").sum() == (t.method == "uniform-online").sum()
    assert (got.method == "stream").sum() == (t.method == "uniform").sum()
    assert (got.method == "store-all").sum() == (t.method == "store-all").sum()  # the rest is untouched
    assert len(t) == len(control_as_method(t, {})) and (t.method == "stream").sum() == 6


def test_controls_are_judged_on_the_same_metrics():
    from workflow.core import claims as claims_mod
    from workflow.core.params import read_yaml
    from workflow.papers.hypergraph_sparsify.evaluate import CLAIMS, CONTROLS, NULLS, measure, measure_controls, measure_nulls

    t, sl = _table_rows(), _sliding_rows()
    ctrl = measure_controls(t, sl, 4, 32)
    assert set(ctrl) == set(CONTROLS) | set(NULLS) and ctrl["aa_uniform"] == measure_nulls(t, sl, 4, 32)["aa_uniform"]
    u = ctrl["uniform_equal_memory"]
    assert u["c1_eps_hat_online_exact"] == [1.5] and u["c1_frac_online_exact"] == [4 / 32]  # uniform-online, median
    assert u["c1_eps_hat_stream"] == [1.0] and u["c4_mincut_dev_stream"] == [0.5, 0.5]
    assert u["c5_sliding_eps_hat_max"] == [0.75]  # the uniform sample of each window
    assert ctrl["offline_sampler"]["c2_ratio_online_exact"] == [1.0, 1.0]
    assert ctrl["no_pre_thinning"]["c2_peak_ratio_stream"] == [4.0, 4.0]
    assert np.allclose(ctrl["shuffled_importance"]["c3_uniform_over_stream_random"], [1 / 0.9] * 2)
    spec = read_yaml(CLAIMS)
    for claim in spec["claims"]:  # every control and null has every metric its claims check
        for name in [claim.get("control"), *claim.get("nulls", {}).values()]:
            if isinstance(name, str):
                assert {c["metric"] for c in claim["checks"]} <= set(ctrl[name]), (claim["id"], name)
    res = claims_mod.evaluate(spec, measure(t, sl, 4, 32), "smoke", controls=ctrl)
    by_id = {c["id"]: c for c in res["claims"]}
    assert by_id["C3"]["verdict"] == "pass" and by_id["C3"]["control"]["verdict"] == "fail"
    assert by_id["C3"]["nulls"]["placebo"]["verdict"] == "fail"  # the shuffled probabilities
    # one seed: the A/A null has no independent partner, so no value and no control of the claim
    assert by_id["C3"]["nulls"]["aa"]["verdict"] == "inconclusive"
    assert by_id["C3"]["uncontrolled_why"].startswith("the A/A null (the comparator in the method's place) has no value here")
    assert by_id["C1"]["control"]["verdict"] == "fail" and by_id["C2m"]["control"]["verdict"] == "fail"


def test_the_aa_nulls_take_the_comparator_of_the_next_seed():
    """Two seeds: aa_uniform puts uniform of the other seed in stream's place (C3's ratio: uniform against uniform),
    aa_online_exact puts online-exact's in stream's (C2m), aa_m_small online-exact's m_small run of the other seed in
    place of its m_large run (C2's ratio of equal-length streams); the method's own values are untouched."""
    import pandas as pd

    from workflow.papers.hypergraph_sparsify.evaluate import measure, measure_nulls

    one = _table_rows()
    two = one.assign(seed=1, stored=one.stored * 2, peak_stored=one.peak_stored * 2, eps_hat=one.eps_hat * 2)
    t = pd.concat([one, two], ignore_index=True)
    sl = pd.concat([_sliding_rows(), _sliding_rows().assign(seed=1)], ignore_index=True)
    own, nulls = measure(t, sl, 4, 32), measure_nulls(t, sl, 4, 32)
    assert own["c2_ratio_online_exact"] == [2.0] * 4 and np.allclose(own["c3_uniform_over_stream_random"], [4.0] * 4)
    # units in (family, seed) order: G0, G1, H3 0, H3 1; seed 1's values are twice seed 0's
    assert np.allclose(nulls["aa_uniform"]["c3_uniform_over_stream_random"], [0.5, 2.0, 0.5, 2.0])
    assert np.allclose(nulls["aa_online_exact"]["c2_peak_ratio_stream"], [2.0] * 4)
    assert np.allclose(nulls["aa_online_exact"]["c2_stream_minus_online_ratio"], [0.0] * 4)
    assert np.allclose(nulls["aa_m_small"]["c2_ratio_online_exact"], [2.0, 0.5, 2.0, 0.5])  # stored(4, s+1) / stored(4, s)


def test_a_missing_metric_is_an_error_and_too_few_units_inconclusive():
    from workflow.core import claims as claims_mod
    from workflow.core.params import read_yaml
    from workflow.papers.hypergraph_sparsify.evaluate import CLAIMS, measure, measure_controls

    t, sl = _table_rows(), _sliding_rows()
    spec = read_yaml(CLAIMS)
    res = claims_mod.evaluate(spec, measure(t, sl, 4, 32), "default", controls=measure_controls(t, sl, 4, 32))
    assert {c["id"]: c["verdict"] for c in res["claims"]}["C2"] == "inconclusive"  # 2 units < 12: never a pass
    no_uniform = t[t.method != "uniform"]
    with pytest.raises(claims_mod.ClaimsError, match="c3_uniform_over_stream_random"):
        claims_mod.evaluate(spec, measure(no_uniform, sl, 4, 32), "default", controls=measure_controls(no_uniform, sl, 4, 32))


def test_method_order_puts_uniform_baselines_after_their_budget_source():
    from workflow.papers.hypergraph_sparsify.sparsify_eval import method_order

    assert method_order(["uniform-online", "uniform", "stream", "online-exact", "online-shuffled"]) == [
        "stream", "online-exact", "online-shuffled", "uniform-online", "uniform"]
    with pytest.raises(ValueError, match="online-exact"):
        method_order(["stream", "uniform-online"])


# ------------------------------------------------------------------------------------------- controls

def test_merge_block_size_is_the_rule_and_stream_uses_it():
    assert HG.merge_block_size(60, 40) == 2340 and HG.merge_block_size(2.5, 11) == 25
    H = HG.planted_hypergraph_stream(n=16, m=1500, r=3, seed=6)
    out = M.run_method("mr-only", H, seed=0, rho_reduce=10)
    assert out["block"] == 150 and out["reductions"] >= 1500 // 150  # every block of 150 arrivals is reduced
    assert M.run_method("mr-only", H, seed=0, rho_reduce=10, block=700)["block"] == 700


def test_shuffled_importance_keeps_the_probabilities_but_not_their_owners():
    rng = np.random.default_rng(0)
    p = np.minimum(1.0, rng.exponential(0.1, size=4000))
    w = rng.uniform(1, 10, size=4000)
    out = M.shuffled_importance_sample(p, w, seed=1)
    assert np.array_equal(np.sort(out["q"]), np.sort(p)) and not np.array_equal(out["q"], p)
    assert np.allclose(out["weight"], w[out["idx"]] / out["q"][out["idx"]])
    assert abs(out["idx"].size - p.sum()) < 5 * math.sqrt(p.sum())  # the same expected memory
    assert out["log_stored"][-1] == out["idx"].size and np.all(np.diff(out["log_stored"]) >= 0)
    H = HG.planted_hypergraph_stream(n=20, m=3000, r=3, seed=0, order="bridges_last")
    exact = M.run_method("online-exact", H, seed=0, rho=10)
    shuffled = M.run_method("online-shuffled", H, seed=0, rho=10)
    assert exact["bridges_kept"] == 6 and shuffled["bridges_kept"] < 6  # bridges lose their p = 1
    assert abs(shuffled["stored"] - exact["stored"]) < 0.1 * exact["stored"]


def test_sliding_control_is_a_uniform_window_sample_of_equal_size():
    H = HG.planted_hypergraph_stream(n=16, m=1500, r=3, seed=7)
    thin = M.sliding_window_sparsify(H["verts"], H["weights"], 16, 400, rho=5, seed=0,
                                     query_times=np.array([400, 1500]), recompute_every=100)
    a = MET.evaluate_sliding(H, thin, seed=3, ascent_steps=0, control_seed=1, n_gauss=20, n_unions=10, n_eig=5)
    b = MET.evaluate_sliding(H, thin, seed=3, ascent_steps=0, control_seed=2, n_gauss=20, n_unions=10, n_eig=5)
    assert np.array_equal(a["eps_hat"], b["eps_hat"])  # the method's scores do not depend on the control's draws
    assert a["eps_hat_uniform"].shape == (2,) and not np.array_equal(a["eps_hat_uniform"], b["eps_hat_uniform"])
    assert (a["eps_hat_uniform"] > a["eps_hat"]).all()  # the planted bridges: uniform loses or over-weights them
