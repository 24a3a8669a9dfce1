"""Tests for ``mppd_tv`` (workflow/papers/mppd_tv): hand-made cases with known answers."""
import numpy as np
import pandas as pd
import pytest
import torch

from workflow.core import claims
from workflow.core.params import ParamsError
from workflow.papers.mppd_tv import evaluate as E
from workflow.papers.mppd_tv import methods as M
from workflow.papers.mppd_tv import plan
from workflow.papers.mppd_tv import tv

torch.set_num_threads(1)

P = {"train_sigma": 0.15, "train_eps": 0.05, "kappa": 0.5, "alpha": 1.0, "lr": 1e-3, "batch": 16, "epochs": 1,
     "eval_sigmas": [0.2], "eval_eps": [0.05], "pgd_steps": 3}


def small_model(seed=0):
    torch.manual_seed(seed)
    return M.SpikingMLP(16, 8, 3, steps=3, tau=0.9, slope=4.0)


def test_the_mppd_is_the_reset_free_leaky_sum_of_current_differences():
    clean, pert = torch.randn(4, 2, 3), torch.randn(4, 2, 3)
    y = M.mppd(clean, pert, tau=0.5)
    delta = clean - pert
    expected = torch.stack([sum(0.5 ** (t - s) * delta[s] for s in range(t + 1)) for t in range(4)])
    torch.testing.assert_close(y, expected)


def test_the_regularisers_on_a_hand_made_trajectory():
    y = torch.tensor([[1.0, -2.0], [3.0, 0.0]])  # (T = 2, 2 neurons)
    assert M.regulariser("plain", y) == 0
    assert M.regulariser("tv_l2", y) == pytest.approx((1 + 4 + 9) / 4)
    assert M.regulariser("tv_l1", y) == pytest.approx(6 / 4)
    assert M.regulariser("tv_l1_temporal", y) == pytest.approx(6 / 4 + (2 + 2) / 2)
    with pytest.raises(ValueError, match="unknown regulariser"):
        M.regulariser("tv_l3", y)


def test_the_detached_control_trains_exactly_as_plain():
    """The control's term is computed but passes no gradient: its parameter gradients equal plain training's, and
    tv_l1's differ (the mechanism is what the control removes, nothing else)."""
    x, y = torch.rand(8, 1, 4, 4), torch.randint(0, 3, (8,))
    x_pert = (x + 0.2 * torch.randn(x.shape)).clamp(0, 1)
    grads = {}
    for reg in ("plain", "tv_l1_detached", "tv_l1"):
        model = small_model()
        total, parts = M.loss(model, reg, x, x_pert, y, P)
        total.backward()
        grads[reg] = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
        assert parts["mppd_l1"] > 0
    torch.testing.assert_close(grads["tv_l1_detached"], grads["plain"])
    assert not torch.allclose(grads["tv_l1"], grads["plain"])


def test_the_pairing_placebo_is_tv_l1_on_mismatched_pairs():
    """K2/K3's placebo: the same l1 term on the MPPD of each perturbed input against another sample's clean currents;
    it logs the true pairs' MPPD as tv_l1 does, and it is tv_l1 exactly when every sample of the batch is the same."""
    x, y = torch.rand(8, 1, 4, 4), torch.randint(0, 3, (8,))
    x_pert = (x + 0.2 * torch.randn(x.shape)).clamp(0, 1)
    out = {}
    for reg in ("tv_l1", "tv_l1_shuffled"):
        model = small_model()
        total, parts = M.loss(model, reg, x, x_pert, y, P)
        total.backward()
        out[reg] = (total.item(), parts, torch.cat([q.grad.flatten() for q in model.parameters() if q.grad is not None]))
    assert out["tv_l1"][1]["mppd_l1"] == out["tv_l1_shuffled"][1]["mppd_l1"]      # the true pairs' MPPD, logged
    assert out["tv_l1"][1]["reg"] != out["tv_l1_shuffled"][1]["reg"]              # the term: mismatched pairs
    assert not torch.allclose(out["tv_l1"][2], out["tv_l1_shuffled"][2])
    same, same_pert = x[:1].repeat(8, 1, 1, 1), x_pert[:1].repeat(8, 1, 1, 1)
    a, _ = M.loss(small_model(), "tv_l1", same, same_pert, y, P)
    b, _ = M.loss(small_model(), "tv_l1_shuffled", same, same_pert, y, P)
    assert torch.allclose(a, b)


def test_attacks_stay_in_their_budget():
    model = small_model().eval()
    x, y = torch.rand(6, 1, 4, 4), torch.randint(0, 3, (6,))
    adv = M.fgsm(model, x, y, 0.05)
    assert (adv - x).abs().max() <= 0.05 + 1e-6 and adv.min() >= 0 and adv.max() <= 1
    free = (x > 0.05) & (x < 0.95)  # away from the clip, FGSM moves every pixel by exactly eps (or 0 on a flat gradient)
    assert torch.isclose((adv - x).abs()[free], torch.tensor(0.05)).float().mean() > 0.5
    adv = M.pgd(model, x, y, 0.1, 3, torch.Generator().manual_seed(0))
    assert (adv - x).abs().max() <= 0.1 + 1e-6


def test_training_and_robustness_run_end_to_end_on_a_tiny_set():
    rng = np.random.default_rng(0)
    x, y = rng.random((32, 1, 4, 4), dtype=np.float32), rng.integers(0, 3, 32)
    for mode in M.MODES:
        model = small_model()
        curves = M.train(model, "tv_l1", mode, x, y, P, seed=0, log=lambda s: None)
        assert set(curves) == {"ce", "reg", "mppd_l1", "mppd_l2"} and len(curves["ce"]) == 1
        acc = M.robustness(model, x, y, P, seed=0)
        assert set(acc) >= {"clean", "gn_0.2", "fgsm_0.05", "pgd_0.05", "mppd_l1"} and 0 <= acc["clean"] <= 1


# --- the toy ---------------------------------------------------------------------------------------------------------

def test_the_closed_forms():
    assert tv.rof_height(10, 0.25, 1.0) == pytest.approx(0.2)
    assert tv.rof_height(4, 0.25, 1.0) == 0.0
    assert tv.tv_l1_height(10, 0.25, 3.0) == 3.0 and tv.tv_l1_height(6, 0.25, 3.0) == 0.0


def test_bumps_are_isolated_and_the_solvers_meet_the_closed_forms():
    f, spans = tv.bump_signal([4, 12], 1.0, margin=10)
    assert [b - a for a, b in spans] == [4, 12] and f.sum() == 16
    assert f[: spans[0][0]].sum() == 0 and f[spans[0][1]: spans[1][0]].sum() == 0  # zeros on both sides
    l1, l2 = (tv.bump_heights(tv.tv_denoise(f, 0.25, fid), spans) for fid in ("l1", "l2"))
    assert l1[0] == pytest.approx(0, abs=1e-3) and l1[1] == pytest.approx(1, abs=1e-3)
    assert l2[1] == pytest.approx(1 - 2 / (0.25 * 12), abs=0.01)


def test_impulses_hit_the_given_share():
    clean = np.full(10_000, 0.5)
    f = tv.noisy(clean, 0.1, 0.0, np.random.default_rng(0))
    assert 0.09 < np.mean(f != 0.5) < 0.11 and set(f[f != 0.5]) == {0.0, 1.0}  # salt and pepper


# --- plan and evaluate ------------------------------------------------------------------------------------------------

def test_the_plan_and_its_cross_check():
    p = {"modes": ["gn"], "regs": ["plain", "tv_l1"], "seeds": [0, 1]}
    assert plan.run_paths(p) == ["results/mppd_tv/runs/gn/plain_s0.json", "results/mppd_tv/runs/gn/plain_s1.json",
                                 "results/mppd_tv/runs/gn/tv_l1_s0.json", "results/mppd_tv/runs/gn/tv_l1_s1.json"]
    ok = {"eval": {"eval_sigmas": [0.2, 0.3], "eval_eps": [0.05], "score_sigmas": [0.3], "score_eps": [0.05]}}
    plan.check(ok)
    bad = {"eval": ok["eval"] | {"score_eps": [0.05, 0.1]}}
    with pytest.raises(ParamsError, match=r"score_eps has \[0.1\].*Fix"):
        plan.check(bad)


def test_measures_are_per_seed_differences_and_the_control_stands_in():
    rows = []
    for seed in (0, 1):
        for reg, score, clean, mppd in (("plain", 0.50, 0.80, 2.0), ("tv_l2", 0.55, 0.79, 1.0),
                                        ("tv_l1", 0.56 + seed / 100, 0.78, 0.5), ("tv_l1_detached", 0.50, 0.80, 2.0)):
            rows.append({"mode": "gn", "reg": reg, "seed": seed, "robust_score": score, "clean": clean, "mppd_l1": mppd})
    table = pd.DataFrame(rows)
    m = E.measure_runs(table, 0.1)
    np.testing.assert_allclose(m["k2_gn_l1_minus_plain"], [0.06, 0.07])
    np.testing.assert_allclose(m["k2_gn_l1_minus_l2"], [0.01, 0.02])
    np.testing.assert_allclose(m["k4_gn_clean_l1_minus_l2"], [-0.01, -0.01])
    np.testing.assert_allclose(m["s2_gn_mppd_l1_ratio_to_plain"], [0.25, 0.25])
    assert "k3_at_l1_minus_plain" not in m  # no AT runs: nothing measured, so the claim is skipped or inconclusive
    c = E.measure_runs(claims.stand_in(table, "reg", E.CONTROLS["detached_regulariser"]), 0.1)
    np.testing.assert_allclose(c["k2_gn_l1_minus_plain"], [0.0, 0.0])
    np.testing.assert_allclose(c["s2_gn_mppd_l1_ratio_to_plain"], [1.0, 1.0])


def test_the_a_a_null_puts_each_comparator_of_another_seed_in_tv_l1s_place():
    rows = []
    for seed in (0, 1, 2):
        for reg, score in (("plain", 0.50 + seed / 100), ("tv_l2", 0.55 - seed / 100), ("tv_l1", 0.60)):
            rows.append({"mode": "gn", "reg": reg, "seed": seed, "robust_score": score, "clean": 0.8, "mppd_l1": 1.0})
    table = pd.DataFrame(rows)
    own = E.measure_runs(table, 0.1)
    aa = E.aa_null(table, 0.1, E.AA["aa_tv_l2_plain"])
    # seed s shows the comparator's seed s - 1 (cyclically) against its seed s
    np.testing.assert_allclose(aa["k2_gn_l1_minus_plain"], [0.02, -0.01, -0.01])
    np.testing.assert_allclose(aa["k2_gn_l1_minus_l2"], [-0.02, 0.01, 0.01])
    assert aa["k3_at_l1_minus_l2"] == [] and aa["k3_at_l1_minus_plain"] == []  # no AT runs: no value, not missing
    assert own == E.measure_runs(table, 0.1)  # TV-l1's own values untouched
