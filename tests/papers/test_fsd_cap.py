"""Tests for the ``fsd_cap`` core pieces (workflow/papers/fsd_cap/methods.py, workflow/lib/graphs.py), tiny graphs.

Known answers used:
* fractional operator T_γ of a star (centre 0, leaves 1, 2, 3) plus the edge 1-2, degrees (3, 2, 2, 1):
  row 0 ∝ d_j^{-γ/2} -> γ = 1: (1 - 1/√2, 1 - 1/√2, √2 - 1); γ = 2: (1/4, 1/4, 1/2).
* region schedule from one end of a 10-node path: S_t = {dist <= 1 + ... + t} -> sizes 2, 4, 7, 10, and one more
  round on the saturated region (the official loop stops only when R stopped growing) -> 2, 4, 7, 10, 10.
* stage 1 on the path 0-1-2 (node 0 observed, x = 1), K = 1, λ = 0.1, γ = 1: hop 1 gives (1, 1, 0), prev = (1, 1, 0)/√2;
  hop 2 (degrees in S: 1, 2, 1): node 1 = (1·1 + 1·0)/2 + 0.1/√2 =: a, node 2 = 1 -> (1, a, 1), prev = (1, a, 1)/N,
  N = √(2 + a²); hop 3 (same S, weights 1, 1/√2, 1): node 1 = (1 + 1)/2 + 0.1 a/N, node 2 = a + 0.1/N.
* entropy weights on the star 0-{1,2,3} with ŷ = (0, 0, 1, 2): node 0 histogram (1/2, 1/4, 1/4), H = 1.5 ln 2,
  log 4 = 2 ln 2 -> w = 1/4; leaf 3 histogram (1/2, 1/2) -> w = 0; leaf 1 (same label as the centre) -> w = 1.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from workflow.lib import graphs as G
from workflow.papers.fsd_cap import methods as M

torch.set_num_threads(1)
S2 = np.sqrt(2.0)


def path(n):
    return G.adjacency(np.array([[i, i + 1] for i in range(n - 1)]), n)


def star_plus():
    return G.adjacency(np.array([[0, 1], [0, 2], [0, 3], [1, 2]]), 4)


# ------------------------------------------------------------------ fractional diffusion operator
@pytest.mark.parametrize("gamma, row0", [(1.0, [0, 1 - 1 / S2, 1 - 1 / S2, S2 - 1]), (2.0, [0, 0.25, 0.25, 0.5])])
def test_fractional_operator_known_rows(gamma, row0):
    t = M.fractional_operator(star_plus(), np.arange(4), gamma)
    assert np.allclose(t[0], row0)
    assert np.allclose(t.sum(1), 1.0)
    assert np.allclose(t[3], [1, 0, 0, 0])  # a leaf averages its only neighbour


@pytest.mark.parametrize("gamma", [0.5, 1.0, 2.0])
def test_vectorised_step_equals_dense_operator(gamma):
    """The implementation note: T_γ z == neighbour average with weights d_j^{-γ/2} (degrees inside S)."""
    a = star_plus()
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4, 3))
    region = np.ones((4, 1), dtype=bool)
    avg, _ = M.weighted_average_step(a, np.broadcast_to(M.fractional_weights(a, region, gamma), z.shape), z)
    assert np.allclose(avg, M.fractional_operator(a, np.arange(4), gamma) @ z)


def test_fractional_weights_use_degrees_inside_the_region():
    a = star_plus()
    region = np.array([[True], [True], [False], [False]])  # S = {0, 1}: both have degree 1 inside S
    w = M.fractional_weights(a, region, 1.0)
    assert np.allclose(w.ravel(), [1, 1, 0, 0])


# ------------------------------------------------------------------ subgraph expansion
def test_hop_distance_per_column():
    d = G.hop_distance(path(5), np.array([[True, False], [False, False], [False, False], [False, False], [False, True]]))
    assert d[:, 0].tolist() == [0, 1, 2, 3, 4] and d[:, 1].tolist() == [4, 3, 2, 1, 0]
    iso = G.hop_distance(G.adjacency(np.array([[0, 1]]), 3), np.array([[True], [False], [False]]))
    assert np.isinf(iso[2, 0])


def test_region_schedule_grows_by_increasing_hops():
    a = path(10)
    dist = G.hop_distance(a, np.eye(10, 1, dtype=bool))
    hops = M.region_schedule(dist)
    assert [int(s.sum()) for s, _ in hops] == [2, 4, 7, 10, 10]
    assert all(active.all() for _, active in hops)
    # the same by the definition: S_t = t-hop neighbourhood of R_{t-1}, R_0 = known
    r = np.eye(10, 1, dtype=bool).ravel()
    for t, (s, _) in enumerate(hops, start=1):
        for _ in range(t):
            r = r | (a @ r.astype(float) > 0)
        assert np.array_equal(r, s.ravel())


def test_stage1_known_answer_on_a_path():
    x = np.array([[1.0], [5.0], [7.0]])
    mask = np.array([[True], [False], [False]])
    out = M.fsd_stage1(path(3), x, mask, iterations=1, gamma=1.0, lam=0.1, mode="structural")
    a = 0.5 + 0.1 / S2
    n = np.sqrt(2 + a * a)
    assert np.allclose(out.ravel(), [1.0, 1.0 + 0.1 * a / n, a + 0.1 / n])


def test_region_schedule_stops_each_column_on_its_own():
    # column 0 known at node 0 of a 4-node path (saturates after 3 hops), column 1 known everywhere (1 hop only)
    dist = G.hop_distance(path(4), np.array([[True, True], [False, True], [False, True], [False, True]]))
    hops = M.region_schedule(dist)
    assert [a.tolist() for _, a in hops] == [[True, True], [True, False], [True, False]]


def test_stage1_keeps_observed_fills_reachable_and_leaves_unreachable_zero():
    rng = np.random.default_rng(1)
    a = sp.block_diag([path(6), path(3)]).tocsr()  # two components
    x = rng.normal(size=(9, 4))
    mask = np.zeros((9, 4), dtype=bool)
    mask[0] = True
    for mode in ("structural", "uniform"):
        out = M.fsd_stage1(a, x, mask, iterations=5, gamma=1.0, lam=0.1, mode=mode)
        assert np.array_equal(out[0], x[0])
        assert np.all(out[1:6] != 0) and np.all(out[6:] == 0)


def test_uniform_mode_diffuses_each_column_from_its_own_known_nodes():
    x = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 3.0]])
    mask = np.array([[True, False], [False, False], [False, True]])
    out = M.fsd_stage1(path(3), x, mask, iterations=60, gamma=1.0, lam=0.0, mode="uniform")
    assert np.allclose(out[:, 0], 1.0) and np.allclose(out[:, 1], 3.0)  # λ = 0: plain averaging -> the known value


# ------------------------------------------------------------------ baselines
def test_mean_and_zero_impute():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    mask = np.array([[True, False], [True, False], [False, False]])
    assert np.allclose(M.mean_impute(x, mask), [[1, 0], [3, 0], [2, 0]])
    assert np.allclose(M.zero_impute(x, mask), [[1, 0], [3, 0], [0, 0]])


def test_feature_propagation_reaches_the_harmonic_fill():
    # path 0-1-2 with both ends known (0 and 2): FP's fixed point at node 1 is Â_10 x0 + Â_12 x2 = (0 + 2)/√2
    x = np.array([[0.0], [9.0], [2.0]])
    mask = np.array([[True], [False], [True]])
    out = M.feature_propagation(path(3), x, mask, iterations=3)
    assert np.allclose(out.ravel(), [0.0, 2 / S2, 2.0])


def test_pcfi_lite_one_step_known_answer():
    x = np.array([[1.0], [0.0], [0.0]])
    mask = np.array([[True], [False], [False]])
    out = M.pcfi_lite(path(3), x, mask, iterations=1, alpha=0.5, mode="structural")
    assert np.allclose(out.ravel(), [1.0, 1 / 1.25, 0.0])  # node 1: (1·1 + 0.25·0) / (1 + 0.25)


# ------------------------------------------------------------------ class-aware propagation
def test_entropy_weights_known_values():
    a = G.adjacency(np.array([[0, 1], [0, 2], [0, 3]]), 4)
    w = M.entropy_weights(a, np.array([0, 0, 1, 2]), 3)
    assert np.allclose(w, [0.25, 1.0, 0.0, 0.0])


def test_class_prototypes_and_refinement():
    z = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 4.0], [0.0, 0.0]])
    yhat = np.array([0, 0, 1, 1])
    w = np.array([1.0, 3.0, 1.0, 0.0])
    proto = M.class_prototypes(z, yhat, w, 2)
    assert np.allclose(proto, [[2.5, 0.0], [0.0, 4.0]])
    mask = np.array([[True, True], [False, False], [False, False], [False, True]])
    conf = np.array([0.5, 0.5, 1.0, 0.0])
    out = M.class_aware_propagation(z, mask, yhat, conf, w, 2)
    assert np.allclose(out, [[1, 0], [2.75, 0], [0, 4], [0, 0]])  # node 3: missing entry -> prototype, observed kept


def test_pseudo_labels_and_confidence():
    logits = np.array([[5.0, 0.0], [0.0, 5.0], [0.0, 0.0]])
    assert M.pseudo_labels(logits, np.array([1, 1, 1]), np.array([0])).tolist() == [1, 1, 0]
    c = M.softmax_confidence(logits, 10.0)
    assert np.isclose(c[0], 1 / (1 + np.exp(-0.5))) and np.isclose(c[2], 0.5)


# ------------------------------------------------------------------ data, splits, masks
def test_masks_structural_rows_and_uniform_entries():
    s = M.missing_mask((2000, 50), "structural", 0.9, 0)
    assert np.all(s.all(1) | ~s.any(1)) and abs(s[:, 0].mean() - 0.1) < 0.03
    u = M.missing_mask((2000, 50), "uniform", 0.9, 0)
    assert abs(u.mean() - 0.1) < 0.01 and not np.all(u.all(1) | ~u.any(1))
    with pytest.raises(ValueError, match="unknown kind"):
        M.missing_mask((2, 2), "rows", 0.5, 0)


def test_per_class_split():
    y = np.repeat(np.arange(4), 50)
    s = M.per_class_split(y, 150, 5, 0)
    assert len(s["train"]) == 20 and np.all(np.bincount(y[s["train"]]) == 5)
    assert len(s["train"]) + len(s["val"]) == 150 and len(s["test"]) == 50
    assert not set(s["train"]) & set(s["val"]) and not set(s["val"]) & set(s["test"])
    # the validation nodes split into the part the imputer may read labels of and the part that selects models
    assert len(s["val_cap"]) == 65 and len(s["val_sel"]) == 65 and not set(s["val_cap"]) & set(s["val_sel"])
    assert np.array_equal(np.union1d(s["val_cap"], s["val_sel"]), s["val"])
    other = M.per_class_split(y, 150, 5, 0, cap_val_frac=0.2)  # the official part of the split does not move
    assert all(np.array_equal(s[k], other[k]) for k in ("train", "val", "test")) and len(other["val_cap"]) == 26
    with pytest.raises(ValueError, match="dev"):
        M.per_class_split(y, 500, 5, 0)
    with pytest.raises(ValueError, match="cap_val_frac"):
        M.per_class_split(y, 150, 5, 0, cap_val_frac=0.001)


# ------------------------------------------------------------------ FSD-CAP variants, label protocol, controls
IMP = dict(iterations=10, gamma=1.0, lam=0.1, fp_iterations=10, pcfi_alpha=0.9, temperature=10.0)
GNN = dict(hidden=8, layers=2, dropout=0.5, lr=0.01, weight_decay=5e-4, epochs=20, patience=10)


def small_graph():
    e, x, y = M.csbm(240, 3, 6, 0.8, 30, 6, 0.3, 2.5, 0.05, seed=1)
    a, x, y = M.keep_largest_component(G.adjacency(e, 240), x, y)
    return a, x, y, M.per_class_split(y, 160, 8, 0), M.missing_mask(x.shape, "uniform", 0.9, 0)


def test_variants_share_stage1_and_the_pre_gnn():
    a, x, y, split, mask = small_graph()
    names = ["fsd_cap", "stage1_only", "cap_no_classes", "fsd_cap_official", "cap_train_labels_only"]
    feats, seconds = M.fsd_family(names, a, x, mask, y, split, "uniform", IMP, GNN, 0)
    assert np.array_equal(feats["stage1_only"], M.fsd_stage1(a, x, mask, 10, 1.0, 0.1, "uniform"))
    for n in names:
        assert np.array_equal(feats[n][mask], x[mask]) and seconds[n] > 0  # observed entries are kept
    assert seconds["fsd_cap"] > seconds["stage1_only"]  # a CAP variant is charged its share of the pre-GNN
    # the control: one prototype (the mean of z), the same confidences as FSD-CAP's own pre-GNN
    z, pre = feats["stage1_only"], M.pre_gnn(a, feats["stage1_only"], y, split, GNN, 0)
    c = M.softmax_confidence(pre["last_logits"], 10.0)[:, None]
    assert np.allclose(feats["cap_no_classes"], np.where(mask, x, c * z + (1 - c) * z.mean(0)))
    assert not np.allclose(feats["cap_no_classes"], feats["fsd_cap"])


def test_the_placebo_runs_cap_on_label_free_classes():
    """cap_label_free: CAP on a seeded k-means partition of the stage-1 features (a function of z alone, no label),
    with the method's own confidences, entropy weights and pull."""
    from workflow.papers.fsd_cap.evaluate import CONTROLS

    a, x, y, split, mask = small_graph()
    feats, _ = M.fsd_family(["stage1_only", "fsd_cap", "cap_label_free"], a, x, mask, y, split, "uniform", IMP, GNN, 0)
    z, pre = feats["stage1_only"], M.pre_gnn(a, feats["stage1_only"], y, split, GNN, 0)
    yhat = M.label_free_classes(z, 3, 0)
    assert set(np.unique(yhat)) == {0, 1, 2} and np.array_equal(yhat, M.label_free_classes(z, 3, 0))
    assert yhat[0] == 0  # ids in the order of their first node
    conf = M.softmax_confidence(pre["last_logits"], 10.0)
    refined = M.class_aware_propagation(z, mask, yhat, conf, M.entropy_weights(a, yhat, 3), 3)
    assert np.allclose(feats["cap_label_free"], refined)
    assert not np.allclose(feats["cap_label_free"], feats["fsd_cap"])
    assert not np.allclose(feats["cap_label_free"], z)
    assert CONTROLS["placebo_class_labels"] == "cap_label_free"


def test_the_imputer_never_reads_the_selection_nodes_labels_and_the_official_protocol_does():
    a, x, y, split, mask = small_graph()
    y2 = y.copy()
    y2[split["val_sel"]] = (y[split["val_sel"]] + 1) % 3  # other labels on the selection nodes only
    names = ["fsd_cap", "cap_no_classes", "cap_train_labels_only", "cap_label_free", "fsd_cap_official"]
    f1, _ = M.fsd_family(names, a, x, mask, y, split, "uniform", IMP, GNN, 0)
    f2, _ = M.fsd_family(names, a, x, mask, y2, split, "uniform", IMP, GNN, 0)
    for n in names[:4]:
        assert np.array_equal(f1[n], f2[n]), n
    assert not np.allclose(f1["fsd_cap_official"], f2["fsd_cap_official"])  # the leak the S1 check must catch
    y3 = y.copy()
    y3[split["val_cap"]] = (y[split["val_cap"]] + 1) % 3  # CAP does read the labels of its own validation half
    f3, _ = M.fsd_family(["fsd_cap", "cap_train_labels_only"], a, x, mask, y3, split, "uniform", IMP, GNN, 0)
    assert not np.allclose(f1["fsd_cap"], f3["fsd_cap"])


def test_impute_all_runs_baselines_and_variants_by_name():
    a, x, y, split, mask = small_graph()
    feats, _ = M.impute_all(["fp", "full", "fsd_cap"], a, x, mask, y, split, "uniform", IMP, GNN, 0)
    assert list(feats) == ["fp", "full", "fsd_cap"] and feats["full"] is x
    assert np.allclose(feats["fp"], M.feature_propagation(a, x, mask, 10))
    with pytest.raises(ValueError, match="unknown"):
        M.impute_all(["fp", "magic"], a, x, mask, y, split, "uniform", IMP, GNN, 0)


def test_csbm_homophily_and_determinism():
    e, x, y = M.csbm(800, 4, 6, 0.8, 100, 10, 0.2, 2.5, 0.05, seed=3)
    a = G.adjacency(e, 800)
    assert abs(G.edge_homophily(a, y) - 0.8) < 0.05
    assert np.all(x.sum(1) == 10)
    e2, x2, _ = M.csbm(800, 4, 6, 0.8, 100, 10, 0.2, 2.5, 0.05, seed=3)
    assert np.array_equal(e, e2) and np.array_equal(x, x2)
    e3, _, y3 = M.csbm(800, 4, 6, 0.2, 100, 10, 0.2, 2.5, 0.05, seed=3)
    assert G.edge_homophily(G.adjacency(e3, 800), y3) < 0.3


# ------------------------------------------------------------------ shared graph pieces
def test_sym_norm_and_knn_graph():
    n = G.sym_norm(path(3), self_loops=False).toarray()
    assert np.allclose(n, [[0, 1 / S2, 0], [1 / S2, 0, 1 / S2], [0, 1 / S2, 0]])
    pts = np.array([[0.0], [1.0], [10.0], [11.0]])
    k = G.knn_graph(pts, 1).toarray()
    assert np.array_equal(k, k.T) and np.array_equal(k, [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])


def test_gcn_learns_a_separable_graph():
    e, x, y = M.csbm(300, 3, 6, 0.9, 60, 10, 0.6, 2.5, 0.05, seed=0)
    a, x, y = M.keep_largest_component(G.adjacency(e, 300), x, y)
    s = M.per_class_split(y, 200, 10, 0)
    r = G.train_node_classifier(a, x, y, s["train"], s["val"], s["test"], hidden=16, layers=2, dropout=0.5, lr=0.01,
                                weight_decay=5e-4, epochs=60, patience=30, seed=0)
    assert r["test_acc"] > 0.8


def test_split_edges_is_a_partition_with_true_non_edges():
    a = G.adjacency(M.csbm(200, 2, 6, 0.8, 10, 3, 0.5, 2.5, 0.05, seed=0)[0], 200)
    s = G.split_edges(a, 0.05, 0.1, np.random.default_rng(0))
    pos = [set(map(tuple, s[k])) for k in ("train", "val", "test")]
    assert sum(map(len, pos)) == a.nnz // 2 and not (pos[0] & pos[1]) and not (pos[0] & pos[2])
    dense = a.toarray()
    assert all(dense[i, j] == 0 for i, j in np.vstack([s["val_neg"], s["test_neg"]]))
    assert s["a_train"].nnz == 2 * len(s["train"])


# ------------------------------------------------------------------ jobs and claim metrics
def test_planned_methods_per_seed():
    from workflow.papers.fsd_cap.plan import planned_methods, run_paths, runs
    from workflow.papers.fsd_cap.run import settings

    plan = {"core": {"methods": ["full", "fp", "fsd_cap"], "seeds": [0, 1, 2]},
            "table": {"methods": ["zero", "fp"], "seeds": [0]}}
    assert planned_methods(plan, 0) == ["full", "fp", "fsd_cap", "zero"] and planned_methods(plan, 2) == ["full", "fp", "fsd_cap"]
    assert planned_methods(plan, 7) == []
    graphs = {"csbm": plan, "mfeat": {"core": {"methods": ["fp"], "seeds": [1]}, "none": {"methods": [], "seeds": [5]}}}
    assert runs(graphs) == [("csbm", 0), ("csbm", 1), ("csbm", 2), ("mfeat", 1)]  # a block without methods adds no job
    assert run_paths(graphs)[-1] == "results/fsd_cap/runs/mfeat/s1.json"
    assert settings(["full", "fp"], ["structural", "uniform"], 0.995, [("structural", 0.5, ["fp"])]) == [
        ("none", 0.0, ["full"]), ("structural", 0.995, ["fp"]), ("uniform", 0.995, ["fp"]), ("structural", 0.5, ["fp"])]


def test_control_metrics_come_from_the_same_function():
    import pandas as pd

    from workflow.papers.fsd_cap.evaluate import measure

    rows = []
    for seed in (0, 1):
        rows.append(dict(dataset="csbm", method="full", seed=seed, task="node", mask="none", rate=0.0, test_acc=0.8, val_acc=0.8))
        for m, acc, val in (("fp", 0.6, 0.62), ("pcfi_lite", 0.61, 0.6), ("stage1_only", 0.58, 0.6),
                            ("fsd_cap", 0.7, 0.72), ("cap_no_classes", 0.5, 0.5), ("fsd_cap_official", 0.72, 0.95)):
            rows.append(dict(dataset="csbm", method=m, seed=seed, task="node", mask="structural", rate=0.995,
                             test_acc=acc + 0.01 * seed, val_acc=val))
    t = pd.DataFrame(rows)
    m, ctl = measure(t, 0.995), measure(t, 0.995, "cap_no_classes")
    assert np.allclose(m["k1_gain_vs_fp_csbm"], 0.1) and np.allclose(m["k4_cap_gain_csbm"], 0.12)
    assert np.allclose(m["k2_gap_to_full_csbm"], [-0.1, -0.09])
    assert np.allclose(ctl["k1_gain_vs_fp_csbm"], -0.1) and np.allclose(ctl["k4_cap_gain_csbm"], -0.08)
    assert np.allclose(m["s1_val_minus_test_csbm"], [0.02, 0.01])
    assert np.allclose(measure(t, 0.995, "fsd_cap_official")["s1_val_minus_test_csbm"], [0.23, 0.22])
    assert "k1_gain_vs_fp_mfeat" not in m  # nothing ran there: absent, so the claims engine reports it missing


def test_the_a_a_nulls_put_each_comparator_of_another_seed_in_fsd_caps_place():
    import pandas as pd

    from workflow.papers.fsd_cap.evaluate import AA, aa_null, measure

    rows = []
    for seed in (0, 1, 2):
        rows.append(dict(dataset="csbm", method="full", seed=seed, task="node", mask="none", rate=0.0,
                         test_acc=0.8 + 0.01 * seed, val_acc=0.8))
        for kind in ("structural", "uniform"):
            for m, acc in (("fp", 0.6), ("pcfi_lite", 0.61), ("stage1_only", 0.58), ("fsd_cap", 0.7)):
                rows.append(dict(dataset="csbm", method=m, seed=seed, task="node", mask=kind, rate=0.995,
                                 test_acc=acc + 0.02 * seed + (0.1 if kind == "uniform" else 0.0), val_acc=0.6))
    t = pd.DataFrame(rows)
    own = measure(t, 0.995)
    aa = {name: aa_null(t, 0.995, comparators) for name, comparators in AA.items()}
    # per (mask, seed), seed s shows the comparator's seed s - 1 (cyclically): +0.04, -0.02, -0.02 in each mask kind
    assert np.allclose(aa["aa_fp_pcfi"]["k1_gain_vs_fp_csbm"], [0.04, -0.02, -0.02] * 2)
    assert np.allclose(aa["aa_fp_pcfi"]["k1_gain_vs_pcfi_csbm"], [0.04, -0.02, -0.02] * 2)
    assert np.allclose(aa["aa_stage1_only"]["k4_cap_gain_csbm"], [0.04, -0.02, -0.02] * 2)
    # `full` (no mask, rate 0) stands in under each mask kind, against full of the unit's own seed
    assert np.allclose(aa["aa_full"]["k2_gap_to_full_csbm"], [0.02, -0.01, -0.01] * 2)
    assert aa["aa_full"]["k2_gap_to_full_mfeat"] == [] and aa["aa_fp"]["k5_gain_vs_fp_het"] == []  # not run: no value
    assert own == measure(t, 0.995) and np.allclose(own["k1_gain_vs_fp_csbm"], 0.1)  # FSD-CAP's own values untouched
