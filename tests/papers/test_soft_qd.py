"""Tests for workflow/papers/soft_qd: scores.py (Soft QD score, QD evaluation), methods.py (SQUAD, benchmarks, ribs
baselines), plan.py (the job lists) and the steps' pure pieces."""
import math
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

from workflow.papers.soft_qd import methods as M  # noqa: E402
from workflow.papers.soft_qd import plan  # noqa: E402
from workflow.papers.soft_qd import scores as S  # noqa: E402


# ---------------------------------------------------------------- Soft QD score, hand-computed cases
def test_single_point_matches_closed_form():
    # one point at the centre of [0,1]^2, sigma=0.05: S = f * 2*pi*sigma^2 (tails outside the box ~ e^-50)
    s = S.soft_qd_score([2.0], [[0.5, 0.5]], 0.05, grid_res=400)
    assert s == pytest.approx(2.0 * 2 * math.pi * 0.05 ** 2, rel=1e-6)
    # near a corner the box truncates: compare to the erf product
    s2 = S.soft_qd_score([1.0], [[0.0, 0.2]], 0.1, grid_res=400)
    exact = S.soft_qd_single_exact(1.0, [0.0, 0.2], 0.1)
    assert s2 == pytest.approx(exact, rel=1e-3)
    # corner point: first coordinate integral is exactly half of sigma*sqrt(2 pi)
    assert exact == pytest.approx(0.5 * 0.1 * math.sqrt(2 * math.pi) * S.soft_qd_single_exact(1.0, [0.2], 0.1), rel=1e-9)


def test_two_far_points_is_sum_of_singles():
    b = np.array([[0.2, 0.2], [0.8, 0.8]])
    f = np.array([1.0, 3.0])
    s = S.soft_qd_score(f, b, 0.05)
    s1 = S.soft_qd_score(f[:1], b[:1], 0.05)
    s2 = S.soft_qd_score(f[1:], b[1:], 0.05)
    assert s == pytest.approx(s1 + s2, rel=1e-9)
    exact = S.soft_qd_single_exact(1.0, b[0], 0.05) + S.soft_qd_single_exact(3.0, b[1], 0.05)
    assert s == pytest.approx(exact, rel=1e-6)
    assert s == pytest.approx(4.0 * 2 * math.pi * 0.05 ** 2, rel=1e-4)  # box truncation at 4 sigma ~ 6e-5


def test_identical_points_no_better_than_one():
    b = np.array([[0.4, 0.6], [0.4, 0.6]])
    s_dup = S.soft_qd_score([1.0, 1.0], b, 0.1)
    s_one = S.soft_qd_score([1.0], b[:1], 0.1)
    assert s_dup == pytest.approx(s_one, rel=1e-12)
    # a duplicate with lower fitness changes nothing; the best one counts
    assert S.soft_qd_score([1.0, 0.3], b, 0.1) == pytest.approx(s_one, rel=1e-12)
    assert S.soft_qd_score([0.3, 2.0], b, 0.1) == pytest.approx(2 * s_one, rel=1e-12)


def test_monotone_adding_and_improving():
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = rng.integers(1, 6)
        f, b = rng.random(n) * 10, rng.random((n, 2))
        s = S.soft_qd_score(f, b, 0.1, grid_res=100)
        f2, b2 = np.append(f, rng.random() * 10), np.vstack([b, rng.random((1, 2))])
        assert S.soft_qd_score(f2, b2, 0.1, grid_res=100) >= s - 1e-12
        fi = f.copy(); fi[0] += 1.0  # improving a solution
        assert S.soft_qd_score(fi, b, 0.1, grid_res=100) >= s - 1e-12
    # Monte-Carlo path (m=4) is monotone too (common random numbers)
    f, b = rng.random(5) * 10, rng.random((5, 4))
    s = S.soft_qd_score(f, b, 0.2, n_mc=20000, seed=1)
    s2 = S.soft_qd_score(np.append(f, 1.0), np.vstack([b, rng.random((1, 4))]), 0.2, n_mc=20000, seed=1)
    assert s2 >= s


def test_limit_to_qd_score_on_grid():
    # 3x3 grid archive, one elite at each cell centre (plus a dominated duplicate): QD score = sum of elites.
    c = (np.arange(3) + 0.5) / 3
    b = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 2)
    f = np.arange(1, 10, dtype=float)
    b_all, f_all = np.vstack([b, b[:1]]), np.append(f, 0.5)
    qd = S.qd_score_grid(f_all, b_all, bins=3)
    assert qd["qd_score"] == pytest.approx(45.0) and qd["coverage"] == 1.0 and qd["n_filled"] == 9
    errs = [abs(S.soft_qd_normalized(f_all, b_all, s, grid_res=600) / qd["qd_score"] - 1) for s in (0.1, 0.03, 0.01)]
    assert errs[-1] < 0.01
    assert errs[0] > errs[-1]  # converges as sigma -> 0


def test_lower_bound_hand_values():
    # two points, distance^2 = 0.5, gamma^2 = 0.5 -> S~ = 4 + 9 - sqrt(36) * e^-1
    v = S.soft_qd_lower_bound([4.0, 9.0], [[0.0, 0.0], [0.5, 0.5]], 0.5)
    assert v == pytest.approx(13 - 6 * math.exp(-1))
    # identical points: 2f - f = f
    assert S.soft_qd_lower_bound([3.0, 3.0], [[0.1], [0.1]], 1.0) == pytest.approx(3.0)


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
    r = S.qd_score_cvt([1.0, 2.0, 5.0], [[0.1, 0.5], [0.2, 0.4], [0.9, 0.9]], cents)
    assert r["qd_score"] == pytest.approx(7.0) and r["coverage"] == 1.0
    # Vendi: n identical points -> 1; n very far points -> n
    assert S.vendi_score(np.zeros((5, 2))) == pytest.approx(1.0, rel=1e-6)
    assert S.vendi_score(np.eye(4) * 100.0) == pytest.approx(4.0, rel=1e-6)


# ---------------------------------------------------------------- SQUAD
def test_squad_increases_soft_qd_and_is_deterministic():
    kw = dict(benchmark="rastrigin", D=16, m=2, N=32, sigma2=0.1, batch_size=16, K=8, seed=3)
    r0 = M.squad(epochs=0, **kw)
    r = M.squad(epochs=15, **kw)
    s0 = S.soft_qd_score(r0["f"], r0["b"], 0.05, grid_res=200)
    s1 = S.soft_qd_score(r["f"], r["b"], 0.05, grid_res=200)
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


def test_squad_without_neighbours_is_plain_fitness_ascent():
    # the control of C1/C2 (K = 0): identical to SQUAD with a vanishing kernel, i.e. only -sum f is minimised
    kw = dict(benchmark="rastrigin", D=16, m=2, N=32, epochs=5, batch_size=16, seed=1)
    assert np.array_equal(M.squad(K=0, sigma2=0.1, **kw)["x"], M.squad(K=0, sigma2=5.0, **kw)["x"])
    assert not np.array_equal(M.squad(K=0, sigma2=5.0, **kw)["x"], M.squad(K=8, sigma2=5.0, **kw)["x"])


def test_squad_repulsion_spreads_descriptors():
    kw = dict(benchmark="sphere", D=16, m=2, N=32, epochs=30, batch_size=32, K=8, seed=0)
    no_rep = M.squad(sigma2=1e-9, **kw)  # kernel vanishes -> pure fitness ascent
    rep = M.squad(sigma2=1.0, **kw)
    assert S.vendi_score(rep["b"], sigma_v=0.2) > S.vendi_score(no_rep["b"], sigma_v=0.2)
    assert no_rep["f"].mean() > rep["f"].mean()


# ---------------------------------------------------------------- ribs baselines
@pytest.mark.parametrize("runner", ["run_map_elites", "run_cma_mae", "run_cma_maega"])
def test_ribs_baselines_small(runner):
    r = getattr(M, runner)("rastrigin", budget=540, seed=0, D=16, m=2, centroids=50)
    assert r["n_evals"] >= 540 and len(r["f"]) > 0 and r["b"].shape[1] == 2
    f, _ = M.evaluate_np("rastrigin", r["x"], 2)
    assert np.allclose(f, r["f"])


def test_cma_maega_counts_a_gradient_evaluation_as_one():
    # one round = 15 solution points (with gradients) + 15 x 35 samples = 540, as the paper's batch_size 36
    r = M.run_cma_maega("rastrigin", budget=1, seed=0, D=16, m=2, centroids=50)
    assert r["n_evals"] == 540
    r = M.run_cma_maega("rastrigin", budget=541, seed=0, D=16, m=2, centroids=50)
    assert r["n_evals"] == 1080


def test_jacobian_matches_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, (3, 8))  # inside [-5.12, 5.12]: the descriptor is the plain mean there
    f, b, jac = M.evaluate_with_jacobian("rastrigin", x, 2)
    assert jac.shape == (3, 3, 8)
    h = 1e-6
    for i in range(8):
        e = np.zeros(8); e[i] = h
        fp, bp = M.evaluate_np("rastrigin", x + e, 2)
        fm, bm = M.evaluate_np("rastrigin", x - e, 2)
        assert np.allclose(jac[:, 0, i], (fp - fm) / (2 * h), rtol=1e-5, atol=1e-6)
        assert np.allclose(jac[:, 1:, i], (bp - bm) / (2 * h), atol=1e-8)
    # descriptor j depends only on its own chunk of 4 coordinates, each with weight 1 / (4 * 10.24)
    assert np.allclose(jac[:, 1, :4], 1 / (4 * 10.24)) and np.allclose(jac[:, 1, 4:], 0)


def test_ribs_missing_gives_clear_error(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "ribs.archives", None)  # importing it now raises ImportError
    with pytest.raises(ImportError, match="pip install ribs==0.12.0"):
        M.run_map_elites(budget=10)


def test_ribs_evaluation_archive_is_fixed():
    c1, c2 = S.ribs_cvt_centroids(3, 16, samples=500), S.ribs_cvt_centroids(3, 16, samples=500)
    assert c1.shape == (16, 3) and np.array_equal(c1, c2)
    assert c1.min() >= 0 and c1.max() <= 1


def test_baselines_start_each_emitter_at_its_own_random_solution():
    x0 = M._initial_solutions(0, 15, 8)
    assert x0.shape == (15, 8) and len(np.unique(x0[:, 0])) == 15 and np.abs(x0).max() <= M.LIM


# ---------------------------------------------------------------- the paper's approx Soft QD (src/evaluate.py)
def test_approx_soft_qd_hand_values():
    # identical descriptors (logit 0): 4 + 9 - sqrt(36) = 7
    assert S.approx_soft_qd_score([4.0, 9.0], [[0.5, 0.5], [0.5, 0.5]]) == pytest.approx(7.0)
    # logit(0.5) = 0, logit(0.75) = ln 3; m = 1 -> gamma^2 = 1/6: 1 + 1 - exp(-6 ln(3)^2)
    v = S.approx_soft_qd_score([1.0, 1.0], [[0.5], [0.75]])
    assert v == pytest.approx(2 - math.exp(-6 * math.log(3) ** 2))


# ---------------------------------------------------------------- steps: small pure pieces
def test_faulty_mean_score_breaks_monotonicity_and_the_limit():
    # the C4 control: adding a weak solution lowers the averaged score, and its limit is the mean fitness, not the sum
    b = np.array([[0.3, 0.3]])
    s = S.soft_qd_score([10.0], b, 0.05, grid_res=200, aggregate="mean")
    s2 = S.soft_qd_score([10.0, 1.0], np.vstack([b, [[0.7, 0.7]]]), 0.05, grid_res=200, aggregate="mean")
    assert s2 < s
    two = dict(f=[2.0, 4.0], b=[[0.25, 0.25], [0.75, 0.75]], sigma=0.02, grid_res=400)
    assert S.soft_qd_normalized(aggregate="mean", **two) == pytest.approx(3.0, rel=1e-3)
    assert S.soft_qd_normalized(**two) == pytest.approx(6.0, rel=1e-3)
    with pytest.raises(ValueError, match="faulty control"):
        S.soft_qd_score([1.0], b, 0.1, aggregate="sum")


def test_run_budget_and_per_m_knobs():
    assert plan.budget({"N": 512, "epochs": 300}) == 154_112
    assert plan.per_m({"m4": 0.1, "m16": 1.0}, 16) == 1.0 and plan.per_m(0.3, 7) == 0.3
    with pytest.raises(ValueError, match="add 'm8: ...'"):
        plan.per_m({"m4": 0.1}, 8)


def test_ratio_to_best_baseline_is_paired_per_seed():
    import pandas as pd
    from workflow.papers.soft_qd import evaluate as E
    runs = pd.DataFrame([
        {"benchmark": "rastrigin", "m": 4, "method": "squad", "seed": 0, "qd_score": 90.0},
        {"benchmark": "rastrigin", "m": 4, "method": "cma_mae", "seed": 0, "qd_score": 100.0},
        {"benchmark": "rastrigin", "m": 4, "method": "map_elites", "seed": 0, "qd_score": 60.0},
        {"benchmark": "rastrigin", "m": 4, "method": "squad", "seed": 1, "qd_score": 80.0},
        {"benchmark": "rastrigin", "m": 4, "method": "cma_mae", "seed": 1, "qd_score": 20.0},
        {"benchmark": "rastrigin", "m": 4, "method": "map_elites", "seed": 1, "qd_score": 40.0},
    ])
    r = E.ratio_to_best_baseline(runs, "rastrigin", 4, "qd_score")
    assert r.tolist() == pytest.approx([0.9, 2.0])
    # CMA-MAEGA counts as a baseline; the control takes SQUAD's place, judged against the same best baseline
    extra = pd.DataFrame([
        {"benchmark": "rastrigin", "m": 4, "method": "cma_maega", "seed": 1, "qd_score": 160.0},
        {"benchmark": "rastrigin", "m": 4, "method": "squad_norep", "seed": 0, "qd_score": 50.0},
        {"benchmark": "rastrigin", "m": 4, "method": "squad_norep", "seed": 1, "qd_score": 40.0},
    ])
    both = pd.concat([runs, extra])
    assert E.ratio_to_best_baseline(both, "rastrigin", 4, "qd_score").tolist() == pytest.approx([0.9, 0.5])
    assert E.ratio_to_best_baseline(both, "rastrigin", 4, "qd_score", "squad_norep").tolist() == pytest.approx([0.5, 0.25])
    assert E.diff_to_best_baseline(runs, "rastrigin", 4, "qd_score").tolist() == pytest.approx([-10.0, 40.0])
    assert len(E.ratio_to_best_baseline(runs, "rastrigin", 16, "qd_score")) == 0  # not run -> no units


def test_theory_trials_hold_and_limit_is_close():
    from workflow.papers.soft_qd import theory as T
    p = {"seed": 0, "grid_res": 60, "trials": 4, "max_set": 4, "sigma_range": [0.05, 0.2], "limit_configs": 1,
         "limit_n": 5, "limit_min_dist": 0.2, "limit_sigmas": [0.05, 0.02]}
    t = T.property_trials(p)
    assert len(t) == 4 and (t.add_gain >= -1e-12).all() and (t.improve_gain >= 0).all()
    assert (t.submodular_margin >= -1e-9).all()
    pts = T.separated_points(10, np.random.default_rng(0), 0.2)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(10)
    assert d.min() >= 0.2 and pts.min() >= 0.05 and pts.max() <= 0.95
    lim = T.limit_table({**p, "grid_res": 400})
    assert lim.set_index("sigma").rel_error[0.02] < 1e-3


def test_voronoi_cells_tile_the_unit_square():
    from workflow.papers.soft_qd import plot as P
    cents = np.random.default_rng(0).random((30, 2))
    polys = P.voronoi_cells(cents)

    def area(q):  # shoelace; Voronoi regions are convex, so ordering by angle around the mean is valid
        c = q.mean(0)
        q = q[np.argsort(np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0]))]
        return 0.5 * abs(np.dot(q[:, 0], np.roll(q[:, 1], 1)) - np.dot(q[:, 1], np.roll(q[:, 0], 1)))

    assert sum(area(q) for q in polys) == pytest.approx(1.0, abs=1e-9)


# ---------------------------------------------------------------- controls, tuning, params
def test_controls_are_measured_under_the_claims_metric_names():
    import pandas as pd
    from workflow.papers.soft_qd import evaluate as E
    rows = [{"benchmark": "rastrigin", "m": m, "method": meth, "seed": s, "qd_score": q, "vendi": v, "approx_soft_qd": q}
            for s in (0, 1, 2) for m in (4, 16)
            for meth, q, v in (("squad", 100.0, 3.0), ("cma_maega", 80.0, 2.0), ("squad_norep", 20.0 + m, 1.0))]
    runs = pd.DataFrame(rows)
    sweep = pd.DataFrame([{"variant": var, "seed": s, "sigma2": s2, "mean_f": f, "vendi": v}
                          for s in (0, 1, 2) for i, s2 in enumerate([0.1, 0.5, 1.0, 2.0])
                          for var, f, v in (("sigma", 10 - i, i), ("fixed", [3, 1, 4, 2][(i + s) % 4], [2, 4, 1, 3][i]))])
    trials = pd.DataFrame([{"variant": v, "S": 1.0, "add_gain": g, "improve_gain": 0.1, "submodular_margin": 0.0}
                           for v, g in (("soft_qd", 0.0), ("faulty_mean", -0.5))])
    limit = pd.DataFrame([{"variant": v, "sigma": 0.01, "rel_error": e} for v, e in (("soft_qd", 1e-8), ("faulty_mean", 0.9))])
    measured, controls = E.measure(runs, sweep, trials, limit), E.measure_controls(runs, sweep, trials, limit)
    claimed = {c["metric"] for claim in E.claims_mod.load(E.CLAIMS)["claims"] for c in claim["checks"]
               if claim["kind"] != "info"}
    assert claimed <= set(measured)
    for name in ("no_repulsion", "fixed_sigma", "faulty_mean"):
        assert set(controls[name]) and set(controls[name]) <= claimed
    assert measured["c1_qd_ratio_m4"] == pytest.approx([1.25] * 3)
    assert controls["no_repulsion"]["c1_qd_ratio_m4"] == pytest.approx([24 / 80] * 3)
    assert controls["no_repulsion"]["c2_qd_ratio_growth_16_minus_4"] == pytest.approx([(36 - 24) / 80] * 3)
    assert measured["c3_spearman_fitness_vs_sigma2"] == pytest.approx([-1.0] * 3)
    assert controls["fixed_sigma"]["c3_spearman_vendi_vs_sigma2"] == pytest.approx([0.0] * 3)
    assert controls["faulty_mean"]["c4_adding_never_decreases"] == [0.0]
    assert measured["c4_adding_never_decreases"] == [1.0]
    # A/A nulls: the best baseline against another seed of itself (here equal: ratio 1, growth 0); C3's is fixed_sigma's
    assert controls["aa_best_baseline"]["c1_qd_ratio_m4"] == pytest.approx([1.0] * 3)
    assert controls["aa_best_baseline"]["c2_qd_ratio_growth_16_minus_4"] == pytest.approx([0.0] * 3)
    assert controls["aa_one_sigma"] == controls["fixed_sigma"]


def test_the_aa_null_takes_the_best_baseline_of_the_next_seed():
    """Per seed the best of the baselines on each metric (here CMA-MAEGA on QD, MAP-Elites on Vendi) of seed s+1
    stands in for SQUAD on seed s; one seed gives no value (an empty list, never a missing metric)."""
    import pandas as pd
    from workflow.papers.soft_qd import evaluate as E
    rows = [{"benchmark": "rastrigin", "m": m, "method": meth, "seed": s, "qd_score": q * (1 + s), "vendi": v,
             "approx_soft_qd": q} for s in (0, 1) for m in (4, 16)
            for meth, q, v in (("squad", 100.0, 3.0), ("cma_maega", 80.0, 1.0), ("map_elites", 40.0, 2.0 + s))]
    runs = pd.DataFrame(rows)
    aa = E.measure_comparisons(E.aa_best_baseline(runs))
    assert aa["c1_qd_ratio_m4"] == pytest.approx([160 / 80, 80 / 160])
    assert aa["c2_vendi_ratio_m16"] == pytest.approx([3 / 2, 2 / 3])
    assert E.measure_comparisons(runs)["c1_qd_ratio_m4"] == pytest.approx([100 / 80, 200 / 160])  # SQUAD's own
    one = E.measure_comparisons(E.aa_best_baseline(runs[runs.seed == 0]))
    assert one == {"c1_qd_ratio_m4": [], "c2_qd_ratio_m16": [], "c2_vendi_ratio_m16": [], "c2_qd_ratio_growth_16_minus_4": []}


def test_sweep_control_seeds_differ_per_label_and_from_reported_seeds():
    from workflow.core.params import load
    from workflow.papers.soft_qd import sweep as S
    p = load("default")["soft_qd"]
    used = set(p["seeds"]) | set(p["sweep"]["seeds"]) | {p["tuning"]["seed"]}
    ctrl = {S.control_seed(s, i) for s in p["sweep"]["seeds"] for i in range(len(p["sweep"]["sigma2s"]))}
    assert len(ctrl) == len(p["sweep"]["seeds"]) * len(p["sweep"]["sigma2s"]) and not ctrl & used


def test_tuning_seed_is_never_a_reported_seed_and_grids_cover_the_tuned_knobs():
    from workflow.core.params import load
    for profile in ("default", "smoke"):
        p = load(profile)["soft_qd"]
        t = p["tuning"]
        assert t["seed"] not in set(p["seeds"]) | set(p["sweep"]["seeds"]) | {p["heatmap"]["seed"]}
        assert set(t["grid"]["squad"]) == {"sigma2", "lr"}
        for method in ("cma_mae", "cma_maega", "map_elites"):
            assert set(t["grid"][method]) == set(p["ribs"][method]), method  # every tuned knob has a grid, and only those


def test_tuning_grid_and_winners():
    import pandas as pd
    from workflow.papers.soft_qd import tune as T
    from workflow.papers.soft_qd import tune_winners as W
    assert T.configs({"b": [1, 2], "a": [0.5]}) == [{"a": 0.5, "b": 1}, {"a": 0.5, "b": 2}]
    table = pd.DataFrame([{"method": "cma_mae", "m": 4, "seed": 100, "sigma0": s, "archive_lr": 0.01, "qd_score": q,
                           "coverage": 0, "vendi": 0, "mean_f": 0, "n_evals": 0} for s, q in ((0.5, 10.0), (2.0, 30.0))])
    w = W.winners([table], {"ribs": {"cma_mae": {"sigma0": {"m4": 2.0}, "archive_lr": {"m4": 0.05}}}})
    got = w.set_index("knob")
    assert got.loc["sigma0", "winner"] == 2.0 and bool(got.loc["sigma0", "agrees"])
    assert not bool(got.loc["archive_lr", "agrees"])


def test_tune_runs_every_configuration_on_the_tuning_seed():
    from workflow.papers.soft_qd import tune as T
    p = {"N": 16, "epochs": 2, "D": 8, "batch_size": 16, "K": 4, "cells": 20, "n_emitters": 2, "batch_per_emitter": 8}
    cents = S.cvt_centroids(2, 16, samples=500)
    t = T.tune("squad", 2, 100, p, {"sigma2": [0.1, 1.0], "lr": [0.05]}, cents, log=lambda *_: None)
    assert len(t) == 2 and set(t.sigma2) == {0.1, 1.0} and (t.seed == 100).all() and (t.n_evals == 48).all()


# ---------------------------------------------------------------- the plan: job lists as functions of the params
def test_plan_lists_every_run_once_in_one_job_per_benchmark_m_seed():
    from workflow.core.params import load
    assert set(plan.BENCHMARKS) == set(M.BENCHMARKS)
    for profile in ("default", "smoke"):
        p = load(profile)["soft_qd"]
        runs = plan.runs(p)
        assert len(runs) == len(set(runs))
        grid = {(b, m, meth, s) for b, spec in p["benchmarks"].items() for m in spec["ms"] for meth in p["methods"]
                for s in spec.get("seeds", p["seeds"])}
        control = {(p["control"]["benchmark"], m, meth, s) for m in p["control"]["ms"] for s in p["seeds"]
                   for meth in (plan.CONTROL, plan.PLACEBO)}  # the negative control and C1/C2's placebo
        heat = {("rastrigin", p["heatmap"]["m"], meth, p["heatmap"]["seed"]) for meth in p["methods"]}
        assert set(runs) == grid | control | heat
        # every run sits in exactly one job, and a job's methods are the runs at its benchmark x m x seed
        jobs = plan.jobs(p)
        assert sum(len(plan.job_methods(p, *job)) for job in jobs) == len(runs)
        assert len(plan.job_paths(p)) == len(set(plan.job_paths(p))) == len(jobs)
        assert plan.heatmap_path(p) in plan.job_paths(p)
        assert set(plan.run_ms(p)) <= set(plan.archive_ms(p)) and p["sweep"]["m"] in plan.archive_ms(p)
    p = load("default")["soft_qd"]
    assert len(plan.jobs(p)) == 3 * 3 + 2 + 1  # rastrigin m4/m8/m16 x 3 seeds, sphere m4/m16 x 1 seed, heatmap m2
    assert plan.job_methods(p, "rastrigin", 4, 1) == ["squad", "cma_mae", "cma_maega", "map_elites", plan.CONTROL,
                                                      plan.PLACEBO]
    assert plan.job_methods(p, "rastrigin", 8, 0) == ["squad", "cma_mae", "cma_maega", "map_elites"]
    assert plan.job_methods(p, "rastrigin", 2, 0) == ["squad", "cma_mae", "cma_maega", "map_elites"]


def test_a_run_job_gives_each_method_its_own_knobs():
    from workflow.papers.soft_qd import run as R
    p = {"N": 8, "epochs": 2, "D": 16, "lr": {"m4": 0.05}, "sigma2": {"m4": 0.1}, "batch_size": 8, "K": 4,
         "cells": 50, "n_emitters": 2, "batch_per_emitter": 4,
         "cma_mae": {"sigma0": {"m4": 2.0}, "archive_lr": {"m4": 0.01}},
         "cma_maega": {"sigma0": {"m4": 0.5}, "lr": {"m4": 0.5}, "archive_lr": {"m4": 0.01}},
         "map_elites": {"iso_sigma": {"m4": 0.5}, "line_sigma": {"m4": 0.2}}}
    assert R.knobs("squad", p) == R.knobs(plan.CONTROL, p) == {"N": 8, "epochs": 2, "D": 16, "lr": {"m4": 0.05},
                                                               "sigma2": {"m4": 0.1}, "batch_size": 8, "K": 4}
    assert R.knobs("cma_maega", p)["lr"] == {"m4": 0.5} and R.knobs("cma_maega", p)["cells"] == 50
    assert "sigma2" not in R.knobs("map_elites", p)
    # a method run inside a job is the run it would be alone (its own seed, nothing shared between methods)
    alone = R.run_one("squad", "rastrigin", 4, 3, p, log=lambda *_: None)
    R.run_one("map_elites", "rastrigin", 4, 3, p, log=lambda *_: None)
    again = R.run_one("squad", "rastrigin", 4, 3, p, log=lambda *_: None)
    assert np.array_equal(alone["f"], again["f"]) and np.array_equal(alone["b"], again["b"])


def test_the_random_neighbours_placebo_keeps_squads_population_and_batches():
    """C1/C2's placebo: the same initial population and batch order as SQUAD (its random neighbours come from a
    generator of its own), a different end point; with K = 0 both are the no-repulsion control."""
    kw = dict(benchmark="rastrigin", D=8, m=2, N=16, epochs=2, sigma2=0.5, lr=0.05, batch_size=8, seed=3)
    a, b = M.squad(K=4, **kw), M.squad(K=4, random_neighbours=True, **kw)
    c, d = M.squad(K=0, **kw), M.squad(K=0, random_neighbours=True, **kw)
    assert a["history"]["mean_f"][0] == b["history"]["mean_f"][0] and a["n_evals"] == b["n_evals"]
    assert not np.allclose(a["x"], b["x"])
    assert np.allclose(c["x"], d["x"])


def test_the_sigma_shuffled_placebo_permutes_each_seeds_labels():
    import pandas as pd

    from workflow.papers.soft_qd.evaluate import sigma_shuffled
    sweep = pd.DataFrame([{"variant": v, "seed": s, "sigma2": x, "mean_f": 10 - x, "vendi": x}
                          for v in ("sigma", "fixed") for s in (0, 1) for x in (0.05, 0.1, 0.5, 1.0, 2.0)])
    out = sigma_shuffled(sweep)
    assert set(out.variant) == {"sigma"} and len(out) == 10
    for s, g in out.groupby("seed"):
        assert sorted(g.sigma2) == [0.05, 0.1, 0.5, 1.0, 2.0] and list(g.sigma2) != [0.05, 0.1, 0.5, 1.0, 2.0]
        assert list(g.mean_f) == [10 - x for x in (0.05, 0.1, 0.5, 1.0, 2.0)]   # the runs themselves are kept
    assert out.equals(sigma_shuffled(sweep))
