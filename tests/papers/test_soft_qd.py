"""Tests for workflow/papers/soft_qd/methods.py (Soft QD score, SQUAD, benchmarks, QD evaluation)."""
import math
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

from workflow.papers.soft_qd import methods as M  # noqa: E402


def _has_ribs():
    try:
        import ribs  # noqa: F401
        return True
    except ImportError:
        return False


# ---------------------------------------------------------------- Soft QD score, hand-computed cases
def test_single_point_matches_closed_form():
    # one point at the centre of [0,1]^2, sigma=0.05: S = f * 2*pi*sigma^2 (tails outside the box ~ e^-50)
    s = M.soft_qd_score([2.0], [[0.5, 0.5]], 0.05, grid_res=400)
    assert s == pytest.approx(2.0 * 2 * math.pi * 0.05 ** 2, rel=1e-6)
    # near a corner the box truncates: compare to the erf product
    s2 = M.soft_qd_score([1.0], [[0.0, 0.2]], 0.1, grid_res=400)
    exact = M.soft_qd_single_exact(1.0, [0.0, 0.2], 0.1)
    assert s2 == pytest.approx(exact, rel=1e-3)
    # corner point: first coordinate integral is exactly half of sigma*sqrt(2 pi)
    assert exact == pytest.approx(0.5 * 0.1 * math.sqrt(2 * math.pi) * M.soft_qd_single_exact(1.0, [0.2], 0.1), rel=1e-9)


def test_two_far_points_is_sum_of_singles():
    b = np.array([[0.2, 0.2], [0.8, 0.8]])
    f = np.array([1.0, 3.0])
    s = M.soft_qd_score(f, b, 0.05)
    s1 = M.soft_qd_score(f[:1], b[:1], 0.05)
    s2 = M.soft_qd_score(f[1:], b[1:], 0.05)
    assert s == pytest.approx(s1 + s2, rel=1e-9)
    exact = M.soft_qd_single_exact(1.0, b[0], 0.05) + M.soft_qd_single_exact(3.0, b[1], 0.05)
    assert s == pytest.approx(exact, rel=1e-6)
    assert s == pytest.approx(4.0 * 2 * math.pi * 0.05 ** 2, rel=1e-4)  # box truncation at 4 sigma ~ 6e-5


def test_identical_points_no_better_than_one():
    b = np.array([[0.4, 0.6], [0.4, 0.6]])
    s_dup = M.soft_qd_score([1.0, 1.0], b, 0.1)
    s_one = M.soft_qd_score([1.0], b[:1], 0.1)
    assert s_dup == pytest.approx(s_one, rel=1e-12)
    # a duplicate with lower fitness changes nothing; the best one counts
    assert M.soft_qd_score([1.0, 0.3], b, 0.1) == pytest.approx(s_one, rel=1e-12)
    assert M.soft_qd_score([0.3, 2.0], b, 0.1) == pytest.approx(2 * s_one, rel=1e-12)


def test_monotone_adding_and_improving():
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = rng.integers(1, 6)
        f, b = rng.random(n) * 10, rng.random((n, 2))
        s = M.soft_qd_score(f, b, 0.1, grid_res=100)
        f2, b2 = np.append(f, rng.random() * 10), np.vstack([b, rng.random((1, 2))])
        assert M.soft_qd_score(f2, b2, 0.1, grid_res=100) >= s - 1e-12
        fi = f.copy(); fi[0] += 1.0  # improving a solution
        assert M.soft_qd_score(fi, b, 0.1, grid_res=100) >= s - 1e-12
    # Monte-Carlo path (m=4) is monotone too (common random numbers)
    f, b = rng.random(5) * 10, rng.random((5, 4))
    s = M.soft_qd_score(f, b, 0.2, n_mc=20000, seed=1)
    s2 = M.soft_qd_score(np.append(f, 1.0), np.vstack([b, rng.random((1, 4))]), 0.2, n_mc=20000, seed=1)
    assert s2 >= s


def test_limit_to_qd_score_on_grid():
    # 3x3 grid archive, one elite at each cell centre (plus a dominated duplicate): QD score = sum of elites.
    c = (np.arange(3) + 0.5) / 3
    b = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 2)
    f = np.arange(1, 10, dtype=float)
    b_all, f_all = np.vstack([b, b[:1]]), np.append(f, 0.5)
    qd = M.qd_score_grid(f_all, b_all, bins=3)
    assert qd["qd_score"] == pytest.approx(45.0) and qd["coverage"] == 1.0 and qd["n_filled"] == 9
    errs = [abs(M.soft_qd_normalized(f_all, b_all, s, grid_res=600) / qd["qd_score"] - 1) for s in (0.1, 0.03, 0.01)]
    assert errs[-1] < 0.01
    assert errs[0] > errs[-1]  # converges as sigma -> 0


def test_lower_bound_hand_values():
    # two points, distance^2 = 0.5, gamma^2 = 0.5 -> S~ = 4 + 9 - sqrt(36) * e^-1
    v = M.soft_qd_lower_bound([4.0, 9.0], [[0.0, 0.0], [0.5, 0.5]], 0.5)
    assert v == pytest.approx(13 - 6 * math.exp(-1))
    # identical points: 2f - f = f
    assert M.soft_qd_lower_bound([3.0, 3.0], [[0.1], [0.1]], 1.0) == pytest.approx(3.0)


# ---------------------------------------------------------------- benchmarks and evaluation
def test_benchmarks_known_values():
    D, m = 32, 4
    x_opt = torch.full((1, D), M.SHIFT, dtype=torch.float64)
    x_worst = torch.full((1, D), -M.LIM, dtype=torch.float64)
    for fn in (M.lp_rastrigin, M.lp_sphere):
        f, b = fn(torch.cat([x_opt, x_worst]), m)
        assert f[0].item() == pytest.approx(100.0) and f[1].item() == pytest.approx(0.0, abs=1e-9)
        assert b.shape == (2, m)
        assert torch.allclose(b[0], torch.full((m,), (M.SHIFT + M.LIM) / (2 * M.LIM), dtype=torch.float64))
        assert torch.allclose(b[1], torch.zeros(m, dtype=torch.float64))
    # out-of-range coordinate is folded: x=10.24 -> 0.5
    x = torch.full((1, 8), 10.24, dtype=torch.float64)
    _, b = M.lp_sphere(x, 2)
    assert torch.allclose(b, torch.full((1, 2), (0.5 + 5.12) / 10.24, dtype=torch.float64))


def test_qd_cvt_and_vendi():
    cents = np.array([[0.25, 0.5], [0.75, 0.5]])
    r = M.qd_score_cvt([1.0, 2.0, 5.0], [[0.1, 0.5], [0.2, 0.4], [0.9, 0.9]], cents)
    assert r["qd_score"] == pytest.approx(7.0) and r["coverage"] == 1.0
    # Vendi: n identical points -> 1; n very far points -> n
    assert M.vendi_score(np.zeros((5, 2))) == pytest.approx(1.0, rel=1e-6)
    assert M.vendi_score(np.eye(4) * 100.0) == pytest.approx(4.0, rel=1e-6)


# ---------------------------------------------------------------- SQUAD
def test_squad_increases_soft_qd_and_is_deterministic():
    kw = dict(benchmark="rastrigin", D=16, m=2, N=32, sigma2=0.1, batch_size=16, K=8, seed=3)
    r0 = M.squad(epochs=0, **kw)
    r = M.squad(epochs=15, **kw)
    s0 = M.soft_qd_score(r0["f"], r0["b"], 0.05, grid_res=200)
    s1 = M.soft_qd_score(r["f"], r["b"], 0.05, grid_res=200)
    assert s1 > 1.05 * s0
    assert r["history"]["lower_bound"][-1] > r["history"]["lower_bound"][0]
    assert r["history"]["mean_f"][-1] > r["history"]["mean_f"][0]
    assert r["n_evals"] == 32 * 16
    r2 = M.squad(epochs=15, **kw)
    assert np.array_equal(r["x"], r2["x"])
    r3 = M.squad(epochs=15, **{**kw, "seed": 4})
    assert not np.array_equal(r["x"], r3["x"])
    # reported f/b match a fresh evaluation of the final x
    f, b = M.evaluate_np("rastrigin", r["x"], 2)
    assert np.allclose(f, r["f"]) and np.allclose(b, r["b"])


def test_squad_repulsion_spreads_descriptors():
    kw = dict(benchmark="sphere", D=16, m=2, N=32, epochs=30, batch_size=32, K=8, seed=0)
    no_rep = M.squad(sigma2=1e-9, **kw)  # kernel vanishes -> pure fitness ascent
    rep = M.squad(sigma2=1.0, **kw)
    assert M.vendi_score(rep["b"], sigma_v=0.2) > M.vendi_score(no_rep["b"], sigma_v=0.2)
    assert no_rep["f"].mean() > rep["f"].mean()


# ---------------------------------------------------------------- ribs baselines
@pytest.mark.skipif(not _has_ribs(), reason="ribs==0.12.0 not installed (pulls numba/llvmlite); baselines optional")
@pytest.mark.parametrize("runner", ["run_map_elites", "run_cma_mae"])
def test_ribs_baselines_small(runner):
    r = getattr(M, runner)("rastrigin", budget=540, seed=0, D=16, m=2, centroids=50)
    assert r["n_evals"] >= 540 and len(r["f"]) > 0 and r["b"].shape[1] == 2
    f, _ = M.evaluate_np("rastrigin", r["x"], 2)
    assert np.allclose(f, r["f"])


def test_ribs_missing_gives_clear_error():
    if _has_ribs():
        pytest.skip("ribs installed")
    with pytest.raises(ImportError, match="pip install ribs==0.12.0"):
        M.run_map_elites(budget=10)
