"""Tests for the ``scsd`` core pieces (workflow/papers/scsd, workflow/lib/missing): hand-made cases with known answers."""

import numpy as np
import pytest
import torch

from workflow.lib import missing
from workflow.papers.scsd import data as D
from workflow.papers.scsd import methods as M
from workflow.papers.scsd import models

torch.set_num_threads(1)


# ------------------------------------------------------------------------------------------ codebook
def test_assign_codes_picks_nearest_code():
    codebook = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    chunks = M.l2norm(torch.tensor([[0.9, 0.1], [0.2, 0.8], [-0.7, -0.3], [0.1, -0.2]]))
    # the last chunk points to (0.45, -0.89): nearest to (1, 0) (distance^2 1.1) rather than (0, 1) or (-1, 0)
    assert M.assign_codes(chunks, codebook).tolist() == [0, 1, 2, 0]


def test_vq_straight_through_ema_and_commitment():
    vq = M.NormEMAVectorQuantizer(n_codes=2, code_dim=2, decay=0.5, kmeans_iters=5, seed=0)
    z = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.9, 0.1, 0.1, 0.9]], requires_grad=True)
    vq.train()
    zq, loss, idx = vq(z)
    # k-means init on the 4 chunks finds the two directions; every chunk maps to its own direction's code
    assert idx.shape == (2, 2) and idx[0, 0] == idx[1, 0] and idx[0, 1] == idx[1, 1] and idx[0, 0] != idx[0, 1]
    codes = vq.codebook[idx.reshape(-1)]
    assert torch.allclose(zq.reshape(-1, 2), codes, atol=1e-6)            # forward value = the codes
    assert torch.allclose(vq.codebook.norm(dim=1), torch.ones(2), atol=1e-6)  # codes stay on the unit sphere
    zq.sum().backward()                                                      # straight-through: gradient reaches z
    assert z.grad is not None and z.grad.abs().sum() > 0
    chunks = M.l2norm(z.detach().reshape(-1, 2))
    assert float(loss.detach()) == pytest.approx(float(((codes - chunks) ** 2).mean()), rel=1e-5)
    assert vq.usage.sum() == 4


def test_vq_ema_moves_code_toward_assigned_mean():
    vq = M.NormEMAVectorQuantizer(n_codes=1, code_dim=2, decay=0.5, kmeans_iters=0, seed=0)
    vq.initialised.fill_(True)
    vq.codebook.copy_(torch.tensor([[1.0, 0.0]]))
    vq.embed_sum.copy_(torch.tensor([[1.0, 0.0]]))
    vq.cluster_size.fill_(1.0)
    vq.train()
    vq(torch.tensor([[0.0, 1.0]]))  # one chunk at (0, 1): EMA sum = 0.5*(1,0) + 0.5*(0,1), size 1 -> code (1,1)/sqrt2
    assert torch.allclose(vq.codebook[0], torch.tensor([1.0, 1.0]) / 2 ** 0.5, atol=1e-6)


# --------------------------------------------------------------------------------------- view weights
def test_label_graph_known_values():
    y = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    # C = Y^T Y = [[3,2,0],[2,3,1],[0,1,1]]; C/diag rows: [1,2/3,0],[2/3,1,1/3],[0,1,1]; zero diag, symmetrise:
    # [[0,2/3,0],[2/3,0,2/3],[0,2/3,0]]; row-normalise -> [[0,1,0],[.5,0,.5],[0,1,0]]
    expect = torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])
    assert torch.allclose(M.label_graph(y), expect, atol=1e-6)
    # with every entry observed the masked form is the same graph
    assert torch.allclose(M.label_graph(y, torch.ones_like(y)), expect, atol=1e-6)


def test_label_graph_ignores_unobserved_entries():
    y = torch.tensor([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    obs = torch.tensor([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])  # the 0 of sample 2 is missing, not negative
    # observed pairs: label 1 present with label 2 in 2 of 2 -> co-occurrence 1 both ways
    s = M.label_graph(y, obs)
    assert torch.allclose(s, torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    # 3 labels, sample 2's label-2 entry missing: P(2|1) counts only samples where label 2 is observed (2/2 = 1,
    # not 2/3), P(3|1) = 1/3, P(1|3) = 1; symmetrised row 1 = [0, 1, 2/3] -> normalised [0, 0.6, 0.4]
    y3 = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    obs3 = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    expect = torch.tensor([[0.0, 0.6, 0.4], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert torch.allclose(M.label_graph(y3, obs3), expect, atol=1e-6)


def test_view_weights_softmax_over_available_views_only():
    q = torch.tensor([0.0, -1.0, -2.0])
    vmask = torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    w = M.view_weights(q, vmask, tau=1.0)
    e = np.exp([0.0, -1.0, -2.0])
    assert np.allclose(w[0].numpy(), e / e.sum(), atol=1e-6)
    assert np.allclose(w[1].numpy(), [0.0, e[1] / (e[1] + e[2]), e[2] / (e[1] + e[2])], atol=1e-6)
    assert np.allclose(w[2].numpy(), [1.0, 0.0, 0.0])
    # a large tau flattens the weights (the spec's observation at tau = 5 with gaps ~0.1)
    flat = M.view_weights(q / 10, vmask, tau=5.0)[0]
    assert float(flat.max() - flat.min()) < 0.02


def test_view_quality_ranks_the_view_that_preserves_correlations_first():
    y = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    s = M.label_graph(y)
    good = y * 0.9 + 0.05
    bad = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]) * 0.9 + 0.05
    q = M.view_quality([good, bad], torch.ones(4, 2), s)
    assert q[0] > q[1]
    exact = M.view_quality([y, bad], torch.ones(4, 2), s)  # predictions equal to the labels reproduce S exactly
    assert float(exact[0]) == pytest.approx(0.0, abs=1e-6) and exact[1] < -0.5


def test_fuse_and_uniform_weights():
    p1, p2 = torch.tensor([[0.2], [0.4]]), torch.tensor([[0.6], [0.8]])
    vmask = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    fused = M.fuse([p1, p2], M.uniform_weights(vmask))
    assert torch.allclose(fused, torch.tensor([[0.4], [0.8]]))


# ------------------------------------------------------------------------------------------- losses
def test_masked_bce_counts_only_observed_entries():
    p = torch.tensor([[0.5, 0.9]])
    y = torch.tensor([[1.0, 0.0]])
    assert float(M.masked_bce(p, y, torch.tensor([[1.0, 0.0]]))) == pytest.approx(np.log(2), rel=1e-5)
    assert float(M.masked_bce(p, y, torch.tensor([[0.0, 1.0]]))) == pytest.approx(-np.log(0.1), rel=1e-4)


def test_cross_view_reconstruction_by_hand():
    x = [torch.tensor([[1.0, 1.0]]), torch.tensor([[2.0]])]
    recon = {(0, 0): torch.tensor([[0.0, 1.0]]), (0, 1): torch.tensor([[0.0]]), (1, 0): torch.tensor([[1.0, 1.0]]), (1, 1): torch.tensor([[1.0]])}
    # errors/d_j: (0,0) 0.5, (0,1) 4, (1,0) 0, (1,1) 1 -> sum 5.5 over 2 available views = 2.75
    assert float(M.cross_view_reconstruction(x, recon, torch.tensor([[1.0, 1.0]]))) == pytest.approx(2.75)
    # view 1 missing: only the (0,0) pair counts, over 1 view
    assert float(M.cross_view_reconstruction(x, recon, torch.tensor([[1.0, 0.0]]))) == pytest.approx(0.5)


def test_metrics_perfect_and_reversed_ranking():
    y = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0]])
    perfect = M.multilabel_metrics(y, y * 0.8 + 0.1)
    assert perfect["ap"] == 1.0 and perfect["one_minus_rl"] == 1.0 and perfect["auc"] == 1.0 and perfect["one_minus_hl"] == 1.0
    worst = M.multilabel_metrics(y, 1 - (y * 0.8 + 0.1))
    assert worst["one_minus_rl"] == 0.0 and worst["auc"] == 0.0


# ------------------------------------------------------------------------------------- data and masks
def test_view_mask_keeps_a_view_and_label_mask_rate():
    rng = np.random.default_rng(0)
    vm = missing.view_mask(5000, 3, 0.7, rng)
    assert vm.sum(1).min() >= 1
    # P(missing | >= 1 view) = (0.7 - 0.7^3) / (1 - 0.7^3) = 0.5434
    assert abs((1 - vm.mean()) - 0.5434) < 0.01
    lm = missing.label_mask((4000, 5), 0.5, rng)
    assert abs(lm.mean() - 0.5) < 0.02
    with pytest.raises(ValueError, match="missing rate"):
        missing.view_mask(3, 2, 1.0, rng)


def test_mfeat_targets_of_digits():
    t = D.mfeat_targets(np.array([0, 7, 8]))
    # loop, vertical, top_bar, bottom_curve, even, ge5, prime, mirror
    assert t.tolist() == [[1, 0, 0, 1, 1, 0, 0, 1], [0, 1, 1, 0, 0, 1, 1, 0], [1, 0, 0, 1, 1, 1, 0, 1]]


def test_synth_view_quality_decreases_with_noise():
    d = D.synth(0, n=600)
    assert [v.shape[1] for v in d["views"]] == [64, 48, 32, 16] and d["y"].shape == (600, 12)
    rates = d["y"].mean(0)
    assert rates.min() > 0.1 and rates.max() < 0.35
    # within-group labels correlate more than across groups
    c = np.corrcoef(d["y"].T)
    within = np.mean([c[i, j] for g in range(3) for i in range(4 * g, 4 * g + 4) for j in range(4 * g, 4 * g + 4) if i != j])
    across = np.mean([c[i, j] for i in range(12) for j in range(12) if i // 4 != j // 4])
    assert within > across + 0.2


def test_incomplete_split_flips_and_masks_training_only():
    y = np.zeros((200, 4), np.float32)
    s = D.incomplete_split(200, 3, 4, 0, r_view=0.5, r_label=0.5, val_frac=0.15, test_frac=0.15, n_train=50,
                           label_flip=0.5, y=y)
    assert len(s["train"]) == 50 and len(s["val"]) == 30 and len(s["test"]) == 30
    assert not set(s["train"]) & set(s["test"]) and not set(s["val"]) & set(s["test"])
    assert 0.35 < s["y_train"].mean() < 0.65 and s["label_mask"].shape == (50, 4)
    assert y.sum() == 0  # the labels of val/test (and the input) are untouched


def test_scsd_forward_weights_zero_on_missing_views_and_loss_finite():
    p = {"z_dim": 8, "n_codes": 16, "code_dim": 4, "ema_decay": 0.99, "kmeans_iters": 2, "alpha": 0.1, "lam": 0.1, "tau": 5.0}
    y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    net = models.build("scsd", [3, 5], 2, M.label_graph(y), p, seed=0)
    x = [torch.randn(4, 3), torch.randn(4, 5)]
    vmask = torch.tensor([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    fused, probs, w, out = net(x, vmask, y, torch.ones_like(y))
    assert torch.isfinite(out["loss"]) and fused.shape == (4, 2)
    assert w[1, 1] == 0 and w[2, 0] == 0 and torch.allclose(w.sum(1), torch.ones(4))
    assert torch.allclose(fused[1], probs[0][1]) and torch.allclose(fused[2], probs[1][2])


# ------------------------------------------------------------------------------------ negative controls
def test_frozen_codebook_keeps_its_random_codes_and_still_quantises():
    learned = M.NormEMAVectorQuantizer(n_codes=4, code_dim=2, decay=0.5, kmeans_iters=3, seed=0)
    frozen = M.NormEMAVectorQuantizer(n_codes=4, code_dim=2, decay=0.5, kmeans_iters=3, seed=0, learn=False)
    start = frozen.codebook.clone()
    assert torch.equal(start, learned.codebook)  # the same seeded random codes before training
    z = torch.randn(16, 4, generator=torch.Generator().manual_seed(1))
    for vq in (learned, frozen):
        vq.train()
        zq, _, idx = vq(z)
        assert torch.allclose(zq.reshape(-1, 2), vq.codebook[idx.reshape(-1)], atol=1e-6)  # quantised to its codes
        assert vq.usage.sum() == 32  # 16 samples x 2 chunks counted by both
    assert torch.equal(frozen.codebook, start) and not bool(frozen.initialised)
    assert not torch.allclose(learned.codebook, start)  # k-means + EMA moved the learned codes


def test_the_control_variant_is_scsd_with_only_its_codebook_frozen():
    p = {"z_dim": 8, "n_codes": 16, "code_dim": 4, "ema_decay": 0.99, "kmeans_iters": 2, "alpha": 0.1, "lam": 0.1, "tau": 5.0}
    s = M.label_graph(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    a, b = models.build("scsd", [3, 5], 2, s, p, seed=0), models.build("scsd_frozen_codebook", [3, 5], 2, s, p, seed=0)
    assert a.vq.learn and not b.vq.learn
    assert (a.cross_rec, a.label_weights, a.distill) == (b.cross_rec, b.label_weights, b.distill) == (True, True, True)
    assert all(torch.equal(u, v) for u, v in zip(a.state_dict().values(), b.state_dict().values()))  # same init


def run_rows():
    """A metrics table and a weights table of two folds: SCSD, its control, three baselines, four ablations."""
    import pandas as pd

    ap = {"scsd": 0.70, "scsd_frozen_codebook": 0.66, "late_fusion_mlp": 0.68, "dicnet_lite": 0.69, "br_logreg": 0.5,
          "scsd_no_vq": 0.71, "scsd_no_xrec": 0.65, "scsd_no_lcw": 0.69, "scsd_no_sd": 0.60}
    rows, weights = [], []
    for seed in (0, 1):
        for m, a in ap.items():
            rows.append(dict(dataset="synth", missing_view=0.5, method=m, seed=seed, ap=a + 0.01 * seed,
                             one_minus_rl=a, codebook_usage=1.0))
            w = [0.4, 0.3, 0.2, 0.1] if m == "scsd" else [0.24, 0.25, 0.26, 0.25]
            weights += [dict(dataset="synth", missing_view=0.5, method=m, seed=seed, view=v + 1, weight=w[v],
                             view_val_ap=0.9 - 0.1 * v) for v in range(4)]
    return pd.DataFrame(rows), pd.DataFrame(weights)


def test_control_metrics_come_from_the_same_function():
    from workflow.papers.scsd.evaluate import measure

    table, weights = run_rows()
    plan = {"own_missing_view": {"synth": 0.5}, "sweep": {"dataset": "synth"}}
    m, frozen = measure(table, weights, plan), measure(table, weights, plan, "scsd_frozen_codebook")
    assert np.allclose(m["k1_ap_margin_synth"], 0.01) and np.allclose(frozen["k1_ap_margin_synth"], -0.03)
    assert m["k2_ablations_beaten"] == [3.0, 3.0] and frozen["k2_ablations_beaten"] == [2.0, 2.0]  # -xrec and -sd
    assert np.allclose(m["k3_spearman_weight_vs_view_ap"], 1.0) and m["k3_view1_weight_largest"] == [1.0, 1.0]
    uniform = measure(table, weights, plan, "scsd_no_lcw")
    # weight ranks (1, 2.5, 4, 2.5) against AP ranks (4, 3, 2, 1): Spearman = -3 / sqrt(4.5 * 5)
    assert uniform["k3_view1_weight_largest"] == [0.0, 0.0]
    assert np.allclose(uniform["k3_spearman_weight_vs_view_ap"], -3 / np.sqrt(22.5))


def test_plan_cells_merge_the_main_grid_and_the_sweep():
    from workflow.papers.scsd import plan as P

    plan = {"datasets": ["synth", "yeast"], "seeds": [0, 1],
            "methods": {"synth": ["scsd", "late_fusion_mlp", "br_logreg"], "yeast": ["scsd"]},
            "sweep": {"dataset": "synth", "missing_view": [0.1, 0.5], "methods": ["scsd", "scsd_frozen_codebook"], "seeds": [0]}}
    datasets = {"synth": {"missing_view": 0.5}, "yeast": {"missing_view": 0.3}}
    cells = P.cells(plan, datasets)
    assert list(cells) == [("synth", 0.1, 0), ("synth", 0.5, 0), ("synth", 0.5, 1), ("yeast", 0.3, 0), ("yeast", 0.3, 1)]
    assert cells[("synth", 0.5, 0)] == ["scsd", "late_fusion_mlp", "br_logreg", "scsd_frozen_codebook"]  # each once
    assert cells[("synth", 0.1, 0)] == ["scsd", "scsd_frozen_codebook"]
    assert P.cell_methods(plan, datasets, "synth", float("0.5"), 1) == ["scsd", "late_fusion_mlp", "br_logreg"]
    assert P.cell_paths(plan, datasets)[0] == "results/scsd/runs/synth/rv0.1/s0.json"
    assert P.graphs_cell(plan, datasets) == "results/scsd/runs/synth/rv0.5/s0.json"


def test_yeast_reader_splits_features_into_contiguous_views():
    """The Yeast CSV layout (Att1..Att103, Class1..Class14); the smoke profile does not run Yeast, this does."""
    import pandas as pd

    rng = np.random.default_rng(0)
    cols = {f"Att{i}": rng.normal(size=4) for i in range(1, 104)} | {f"Class{i}": rng.integers(0, 2, 4) for i in range(1, 15)}
    d = D.yeast(pd.DataFrame(cols), 3)
    assert [v.shape for v in d["views"]] == [(4, 35), (4, 34), (4, 34)] and d["y"].shape == (4, 14)
    assert d["view_names"] == ["att1-35", "att36-69", "att70-103"]
    assert np.array_equal(np.concatenate(d["views"], axis=1), pd.DataFrame(cols).iloc[:, :103].to_numpy(np.float32))
    with pytest.raises(ValueError, match="103 Att"):
        D.yeast(pd.DataFrame(cols).drop(columns="Att7"), 3)


def test_the_a_a_nulls_put_each_comparator_of_another_fold_in_scsds_place():
    import pandas as pd

    from workflow.papers.scsd.evaluate import AA, aa_nulls, measure

    table, weights = run_rows()
    third = table[table.seed == 1].assign(seed=2, ap=lambda d: d.ap + 0.01)  # a third fold: AP +0.01 per fold
    table = pd.concat([table, third], ignore_index=True)
    sweep = [dict(dataset="synth", missing_view=rv, method=m, seed=seed, ap=a - 0.05 * rv * (1 + seed),
                  one_minus_rl=a, codebook_usage=1.0)
             for rv in (0.1, 0.7) for m, a in (("scsd", 0.7), ("late_fusion_mlp", 0.68)) for seed in (0, 1, 2)]
    table = pd.concat([table, pd.DataFrame(sweep)], ignore_index=True)
    plan = {"own_missing_view": {"synth": 0.5}, "sweep": {"dataset": "synth"}}
    own = measure(table, weights, plan)
    aa = aa_nulls(table, weights, plan)
    assert set(aa) == set(AA) and all(set(aa[name]) == set(metrics) for name, metrics in AA.items())
    # the best baseline (dicnet_lite, AP 0.69 + 0.01 * fold) of fold s - 1 against fold s's: +0.02, -0.01, -0.01
    assert np.allclose(aa["aa_best_baseline"]["k1_ap_margin_synth"], [0.02, -0.01, -0.01])
    assert np.allclose(aa["aa_best_baseline"]["k1_rl_margin_synth"], 0.0)
    assert aa["aa_best_baseline"]["k1_ap_margin_mfeat"] == []  # not run: no value, not a missing metric
    # each ablation of fold s - 1 beats itself in fold s by 0.02 in fold 0 only (4 of 4), by -0.01 in folds 1, 2
    assert aa["aa_ablations"]["k2_ablations_beaten"] == [4.0, 0.0, 0.0]
    # late fusion's drop from r_V 0.1 to 0.7 is 0.03 (1 + fold): fold s - 1's minus fold s's
    assert np.allclose(aa["aa_late_fusion_mlp"]["k4_drop_scsd_minus_late_fusion"], [0.06, -0.03, -0.03])
    assert own == measure(table, weights, plan)  # SCSD's own values untouched
