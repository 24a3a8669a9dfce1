"""Tests for the ``stbp`` core pieces (workflow/papers/stbp, workflow/lib/timeseries): hand-made cases with known answers."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from workflow.lib.timeseries import chrono_split, sliding_windows
from workflow.papers.stbp import evaluate as E
from workflow.papers.stbp import methods as M
from workflow.papers.stbp import models as S

torch.set_num_threads(1)


# ------------------------------------------------------------------------------------------- windows
def test_chrono_split_and_windows_stay_inside_their_part():
    assert chrono_split(100) == {"train": (0, 60), "val": (60, 80), "test": (80, 100)}
    series = np.arange(30.0)[:, None] * np.array([1.0, 10.0])  # (T=30, N=2)
    x, y = sliding_windows(series, (5, 15), 3, 2)
    assert x.shape == (6, 2, 3) and y.shape == (6, 2, 2)  # 10 steps, span 5 -> 6 windows
    assert x[0, 0].tolist() == [5, 6, 7] and y[0, 0].tolist() == [8, 9]
    assert y[-1, 1].tolist() == [130, 140]  # the last window ends at step 14, inside the part
    assert sliding_windows(series, (0, 4), 3, 2)[0].shape == (0, 2, 3)


# ------------------------------------------------------------------------------------------- model pieces
def test_frenet_identity_filter_and_dc_only_filter():
    f = S.FreNet(8)
    z = torch.randn(2, 3, 8)
    with torch.no_grad():
        f.weight.zero_()
        f.weight[:, 0] = 1.0  # K = 1: irfft(rfft(z)) = z
    assert torch.allclose(f(z), z, atol=1e-6)
    with torch.no_grad():
        f.weight.zero_()
        f.weight[0, 0] = 1.0  # keep only the DC term: every entry becomes the mean over the feature axis
    assert torch.allclose(f(z), z.mean(-1, keepdim=True).expand_as(z), atol=1e-6)


def test_joint_layer_norm_over_nodes_and_channels():
    x = torch.randn(3, 5, 4) * 7 + 2
    h = S.joint_layer_norm(x)
    assert torch.allclose(h.mean(dim=(1, 2)), torch.zeros(3), atol=1e-5)
    assert torch.allclose(h.var(dim=(1, 2), unbiased=False), torch.ones(3), atol=1e-3)


def test_dlga_linear_attention_equals_explicit_node_sum():
    torch.manual_seed(0)
    att = S.DLGA(4)
    x, mem = torch.randn(2, 5, 4), torch.randn(5, 4)
    out = att(x, mem)
    s = math.sqrt(4)
    q = torch.softmax(torch.relu(att.q(x)) / s, -1)
    k = torch.softmax(torch.relu(att.k(x)) / s, -1)
    v = torch.relu(att.v(x))
    m = torch.softmax(mem / s, -1)
    ref = torch.zeros(2, 5, 4)
    for b in range(2):
        for n in range(5):  # out_n = sum_m (q_n . k_m) v_m + sum_m (q_n . mem_m) v_m
            ref[b, n] = sum((q[b, n] @ k[b, j]) * v[b, j] + (q[b, n] @ m[j]) * v[b, j] for j in range(5))
    assert torch.allclose(out, torch.relu(att.out(ref)), atol=1e-5)


def test_bank_rows_modulate_their_own_node():
    torch.manual_seed(0)
    model = S.STBP(3, d=8)
    x = torch.randn(2, 3, 12)
    before = model(x, torch.arange(3))
    with torch.no_grad():
        model.bank[2, :8] = 0.0  # gate of node 2 = 0: the encoder adds nothing to node 2
    after = model(x, torch.arange(3))
    h = torch.relu(model.fconv1(x))
    direct = model.fc(torch.nn.functional.gelu(model.fconv2(h) + x))
    assert torch.allclose(after[:, 2], direct[:, 2], atol=1e-5)
    assert not torch.allclose(before[:, 2], after[:, 2])


# ------------------------------------------------------------------------------------------- continual protocol
def _toy(n, w=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(w, n, 12, generator=g)
    return x, x.flip(-1) * 3 + 1


def test_bank_expansion_keeps_old_rows_and_adds_uniform_rows():
    model = S.STBP(4, d=8)
    old = model.bank.detach().clone()
    model.expand(7)
    assert model.bank.shape == (7, 24)
    assert torch.equal(model.bank[:4], old)
    assert model.bank[4:].abs().max() <= 0.1 and model.bank[4:].std() > 0


def test_stbp_incremental_year_trains_only_the_bank():
    torch.manual_seed(0)
    d, n0, n1 = 8, 4, 6
    model, trains = S.carry_over("stbp", None, 0, n0, d)
    assert trains and S.trainable_count(model) == sum(p.numel() for p in model.parameters())
    model, trains = S.carry_over("stbp", model, 1, n1, d)
    assert trains and S.trainable_count(model) == 3 * d * n1  # K2's structural check
    backbone = {k: v.clone() for k, v in model.state_dict().items() if k != "bank"}
    bank = model.bank.detach().clone()
    nodes, adj = torch.arange(n1), S.normalised_adjacency(np.ones((n1, n1)) - np.eye(n1))
    S.fit(model, _toy(n1), _toy(n1, 10, 1), nodes, adj, lr=0.05, batch=8, max_epochs=2, patience=5, seed=0)
    for k, v in model.state_dict().items():
        if k != "bank":
            assert torch.equal(v, backbone[k]), k  # frozen: bit-for-bit unchanged
    assert not torch.equal(model.bank[:n0], bank[:n0]) and not torch.equal(model.bank[n0:], bank[n0:])


def test_protocols_static_finetune_retrain_and_no_bank_mod():
    d = 8
    base, _ = S.carry_over("static", None, 0, 3, d)
    same, trains = S.carry_over("static", base, 1, 5, d)
    assert same is base and not trains and same.bank.shape[0] == 5
    ft, _ = S.carry_over("finetune_all", None, 0, 3, d)
    ft, trains = S.carry_over("finetune_all", ft, 1, 5, d)
    assert trains and S.trainable_count(ft) == sum(p.numel() for p in ft.parameters())
    old, _ = S.carry_over("retrain", None, 0, 3, d)
    new, trains = S.carry_over("retrain", old, 1, 5, d)
    assert new is not old and trains and new.bank.shape[0] == 5
    nb, _ = S.carry_over("stbp_no_bank_mod", None, 0, 3, d)
    nb, trains = S.carry_over("stbp_no_bank_mod", nb, 1, 5, d)
    assert not trains  # the bank is unused: nothing left to train
    eac, _ = S.carry_over("eac_lite", None, 0, 3, d)
    eac, trains = S.carry_over("eac_lite", eac, 1, 5, d)
    assert trains and S.trainable_count(eac) == 5 * d  # only the prompts


def test_fit_restores_best_weights_and_without_trainables_does_nothing():
    torch.manual_seed(0)
    model = S.STBP(3, d=8)
    nodes, adj = torch.arange(3), S.normalised_adjacency(np.zeros((3, 3)))
    res = S.fit(model, _toy(3), _toy(3, 10, 1), nodes, adj, lr=0.3, batch=8, max_epochs=8, patience=3, seed=0)
    assert res["best_epoch"] < res["epochs"]  # a large lr: later epochs are worse, so restoring matters
    val = float(S.masked_mae_loss(S.predict(model, *_toy(3, 10, 1)[:1], nodes, adj), _toy(3, 10, 1)[1]))
    assert val == pytest.approx(res["best_val_mae"], rel=1e-5) and res["best_val_mae"] == min(v for _, v in res["curve"])
    S.freeze_all_but_nodes(S.GcnTcn(3))  # no node rows at all
    frozen = S.GcnTcn(3)
    S.freeze_all_but_nodes(frozen)
    assert S.trainable_count(frozen) == 0
    assert S.fit(frozen, _toy(3), _toy(3), nodes, adj, lr=0.01, batch=8, max_epochs=3, patience=2, seed=0)["epochs"] == 0


def test_normalised_adjacency_known_values():
    a = S.normalised_adjacency(np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert torch.allclose(a, torch.full((2, 2), 0.5))


# ------------------------------------------------------------------------------------------- data and metrics
def test_gaussian_adjacency_known_values():
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])  # distances 1, 2, 3; sigma = median = 2
    w = M.gaussian_adjacency(pos, threshold=0.2)
    assert w[0, 1] == pytest.approx(math.exp(-1 / 4)) and w[1, 2] == pytest.approx(math.exp(-4 / 4))
    assert w[0, 2] == 0.0  # exp(-9/4) = 0.105 < 0.2: cut
    assert M.gaussian_adjacency(pos, threshold=0.1)[0, 2] == pytest.approx(math.exp(-9 / 4))
    assert np.allclose(w, w.T) and np.all(np.diag(w) == 0)


def test_stream_traffic_expands_and_puts_night_nodes_only_among_new_ones():
    years = M.stream_traffic(1, years=4, n0=10, dn=4, days=1, night_from=2, night_prob=1.0)
    assert [y["x"].shape for y in years] == [(288, 10), (288, 14), (288, 18), (288, 22)]
    assert [int(y["is_new"].sum()) for y in years] == [0, 4, 4, 4]
    assert (years[1]["node_type"] != M.NIGHT).all()
    assert (years[3]["node_type"][14:] == M.NIGHT).all() and (years[3]["node_type"][:14] != M.NIGHT).all()
    assert np.array_equal(years[3]["node_type"][:10], years[0]["node_type"])  # sensors keep their pattern
    assert all((y["x"] >= 0).all() for y in years)
    again = M.stream_traffic(1, years=4, n0=10, dn=4, days=1, night_from=2, night_prob=1.0)
    assert np.array_equal(again[3]["x"], years[3]["x"])


def test_pedestrian_years_late_sensor_joins_next_year():
    rows = []
    for day in pd.date_range("2015-01-01", "2016-12-31", freq="D"):
        for h in range(24):
            rows.append({"Sensor": "A", "Date": day.date().isoformat(), "Time": h, "Count": 10})
            if day >= pd.Timestamp("2015-02-16"):
                rows.append({"Sensor": "B", "Date": day.date().isoformat(), "Time": h, "Count": 20})
    years, sensors = M.pedestrian_years(pd.DataFrame(rows).drop(index=[5]))  # one missing hour of A
    assert sensors == ["A", "B"] and [y["year"] for y in years] == [2015, 2016]
    assert years[0]["x"].shape == (8760, 1) and years[1]["x"].shape == (8784, 2)
    assert years[1]["is_new"].tolist() == [False, True]
    assert np.isnan(years[0]["x"][5, 0]) and np.isfinite(years[0]["x"][[4, 6], 0]).all() and np.nansum(years[1]["x"][:, 1]) == 20 * 8784
    with pytest.raises(ValueError, match="Sensor"):
        M.pedestrian_years(pd.DataFrame({"x": [1]}))


def test_forecast_metrics_known_answers_with_masks():
    true = np.full((2, 3, 12), 10.0)
    true[0, 0, :] = 0.0  # excluded from MAPE (y < 1)
    true[1, 2, 5] = np.nan  # excluded everywhere
    pred = true + 2.0
    out = M.forecast_metrics(np.nan_to_num(pred), true)
    assert out["mae_avg"] == pytest.approx(2.0) and out["rmse_3"] == pytest.approx(2.0)
    assert out["mape_avg"] == pytest.approx(20.0)
    assert M.masked_mae(pred, true, np.array([True, False, False])) == pytest.approx(2.0)


def test_ratio_pairs_units_and_takes_the_minimum_denominator():
    years = pd.DataFrame({"dataset": "stream", "seed": 0, "year": [0, 0, 0, 1, 1, 1],
                          "method": ["stbp", "finetune_all", "retrain"] * 2, "mae_avg": [9.0, 10.0, 12.0, 8.0, 4.0, 5.0]})
    assert E.ratio(years, "stream", "stbp", ["finetune_all", "retrain"]) == [0.9, 2.0]
    assert E.ratio(years, "stream", "stbp", "retrain", incremental=True) == [1.6]
    assert E.ratio(years, "stream", "stbp", "eac_lite") == []


def test_gcn_baseline_mixes_nodes_only_through_the_graph():
    torch.manual_seed(0)
    model = S.GcnTcn(3, d=8)
    x = torch.randn(2, 3, 12)
    x2 = x.clone()
    x2[:, 2] += 5.0  # perturb node 2
    alone = S.normalised_adjacency(np.zeros((3, 3)))  # no edges: A_hat = I, every node on its own
    linked = S.normalised_adjacency(np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0.0]]))  # 0 - 2 linked, 1 alone
    nodes = torch.arange(3)
    assert torch.allclose(model(x, nodes, alone)[:, 0], model(x2, nodes, alone)[:, 0])
    assert not torch.allclose(model(x, nodes, linked)[:, 0], model(x2, nodes, linked)[:, 0])
    assert torch.allclose(model(x, nodes, linked)[:, 1], model(x2, nodes, linked)[:, 1])


# ------------------------------------------------------------------------------- comparators and controls (issue 10)
def test_backbone_only_trains_everything_but_the_bank():
    torch.manual_seed(0)
    d, n0, n1 = 8, 4, 6
    model, _ = S.carry_over("backbone_only", None, 0, n0, d)
    model, trains = S.carry_over("backbone_only", model, 1, n1, d)
    total = sum(p.numel() for p in model.parameters())
    assert trains and S.trainable_count(model) == total - 3 * d * n1
    bank = model.bank.detach().clone()
    nodes, adj = torch.arange(n1), S.normalised_adjacency(np.ones((n1, n1)) - np.eye(n1))
    fc = model.fc.weight.detach().clone()
    res = S.fit(model, _toy(n1), _toy(n1, 10, 1), nodes, adj, lr=0.05, batch=8, max_epochs=2, patience=5, seed=0)
    assert torch.equal(model.bank, bank) and not torch.equal(model.fc.weight, fc)
    assert res["cpu_seconds"] > 0


def test_derangement_moves_every_node_and_shuffles_the_bank_rows_only():
    from workflow.papers.stbp import train as T

    rng = np.random.default_rng(0)
    for n in (2, 3, 10):
        perm = T.derangement(n, rng)
        assert sorted(perm.tolist()) == list(range(n)) and (perm != np.arange(n)).all()
    assert T.derangement(1, rng).tolist() == [0]
    torch.manual_seed(0)
    model = S.STBP(3, d=8)
    x = torch.randn(2, 3, 12)
    perm = torch.tensor([2, 0, 1])
    swapped = S.STBP(3, d=8)
    swapped.load_state_dict(model.state_dict())
    with torch.no_grad():
        swapped.bank.copy_(model.bank[perm])  # node i holding row perm[i] = reading row perm[i]
    assert torch.allclose(model(x, perm), swapped(x, torch.arange(3)), atol=1e-6)


def test_the_placebo_deals_the_bank_rows_at_random_in_training_only():
    """stbp_shuffled_bank: STBP's init and parameters; each training forward reads the bank through a fresh random
    permutation of the nodes (its own generator), evaluation reads row i for node i as STBP does."""
    torch.manual_seed(0)
    model, trains = S.carry_over("stbp", None, 0, 5, 8)
    torch.manual_seed(0)
    placebo, _ = S.carry_over("stbp_shuffled_bank", None, 0, 5, 8)
    assert trains and all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), placebo.state_dict().values()))
    x = torch.randn(2, 5, 12)
    model.eval(), placebo.eval()
    assert torch.equal(model(x, torch.arange(5)), placebo(x, torch.arange(5)))  # evaluation: STBP's reading
    placebo.train()
    placebo.seed_shuffle(3)
    first = placebo(x, torch.arange(5))
    outs = [placebo(x, torch.arange(5)) for _ in range(4)]
    assert any(not torch.allclose(first, o) for o in outs)  # a new dealing of the rows in every training batch
    placebo.seed_shuffle(3)
    assert torch.equal(first, placebo(x, torch.arange(5)))  # seeded: the same run gives the same permutations
    torch.manual_seed(1)
    _ = torch.rand(1)
    state = torch.get_rng_state()
    placebo(x, torch.arange(5))
    assert torch.equal(state, torch.get_rng_state())  # the global RNG (init of new rows) is untouched


def _years_table():
    """One seed, years 0-1, STBP and its comparators; shuffled columns double STBP's MAEs."""
    rows = []
    for year, n in ((0, 4), (1, 6)):
        for method, mae, trainable, cpu in (("stbp", 10.0, 3 * 8 * n, 2.0), ("finetune_all", 9.0, 1000, 3.0),
                                            ("retrain", 9.5, 1000, 5.0), ("trafficstream_lite", 12.0, 500, 1.0),
                                            ("backbone_only", 20.0, 900, 3.0), ("static", 30.0, 0, 0.0)):
            row = {"dataset": "stream", "seed": 0, "year": year, "method": method, "n_nodes": n, "d": 8,
                   "trainable": trainable, "cpu_seconds": cpu, "seconds": cpu,
                   **{c: mae for c in E.METRIC_COLS + E.NODE_COLS}}
            rows.append(row | {f"shuffled_{c}": 2 * mae for c in E.METRIC_COLS + E.NODE_COLS})
    return pd.DataFrame(rows)


def test_controls_are_measured_by_the_same_function():
    years = _years_table()
    back = pd.DataFrame({"dataset": ["stream"], "method": ["stbp"], "seed": [0], "mae_year0_final": [1.0],
                         "mae_year0_initial": [1.0]})
    m = E.measure(years, back)
    c = E.controls_of(years, back)
    assert m["k1_ratio_vs_trafficstream"] == pytest.approx([10 / 12] * 2)
    assert c["bank_shuffled"]["k1_ratio_vs_trafficstream"] == pytest.approx([20 / 12] * 2)
    assert m["k4_night_ratio_vs_backbone_only"] == pytest.approx([0.5]) and m["k4_night_ratio_vs_static"] == pytest.approx([1 / 3])
    assert c["bank_shuffled"]["k4_night_ratio_vs_backbone_only"] == pytest.approx([1.0])
    assert m["k2_trainable_minus_3dN"] == [0.0] and m["k2_time_ratio_vs_retrain"] == pytest.approx([0.4])
    assert c["unfrozen"]["k2_trainable_minus_3dN"] == [1000.0 - 3 * 8 * 6]  # the freezing check catches it
    assert c["unfrozen"]["k2_time_ratio_vs_retrain"] == pytest.approx([0.6])
    assert (years.loc[years.method == "stbp", "mae_avg"] == 10.0).all()  # the controls leave the table untouched
    placebo = years[years.method == "stbp"].assign(method=E.PLACEBO, **{c: 11.0 for c in E.METRIC_COLS + E.NODE_COLS})
    with_placebo = pd.concat([years, placebo], ignore_index=True)
    c = E.controls_of(with_placebo, back)  # the placebo run in STBP's place, measured by the same function
    assert c["placebo_bank"]["k1_ratio_vs_trafficstream"] == pytest.approx([11 / 12] * 2)
    assert c["placebo_bank"]["k4_night_ratio_vs_backbone_only"] == pytest.approx([11 / 20])
    assert E.measure(with_placebo, back) == m  # STBP's own values untouched


def test_plan_lists_each_run_once_in_plan_order():
    from workflow.papers.stbp import plan

    runs_of = {"stream": {"main": {"methods": ["stbp", "static"], "seeds": [0, 1]},
                          "ablations": {"methods": ["stbp_no_freq", "stbp"], "seeds": [0]}},
               "pedestrian": {"main": {"methods": ["stbp"], "seeds": [2]}, "ablations": {"methods": [], "seeds": []}}}
    assert plan.runs(runs_of) == [("stream", "stbp", 0), ("stream", "stbp", 1), ("stream", "static", 0),
                                  ("stream", "static", 1), ("stream", "stbp_no_freq", 0), ("pedestrian", "stbp", 2)]
    assert plan.run_paths(runs_of)[-1] == "results/stbp/runs/pedestrian/stbp_s2.json"
    assert plan.raw_files("stream") == [] and plan.raw_files("pedestrian") == ["data/raw/pedestrian.csv"]


@pytest.fixture(scope="module")
def tiny_stream():
    """Three yearly tasks of a tiny expanding network (6 -> 8 -> 10 sensors, 1 day at 5 min), packed as the data
    step writes it."""
    from workflow.papers.stbp import data

    return data.pack(M.stream_traffic(3, years=3, n0=6, dn=2, days=1, night_from=2, night_prob=1.0))


@pytest.mark.parametrize("method", sorted(S.METHODS))
def test_every_method_runs_the_yearly_protocol(tiny_stream, method):
    """Each method through every year, as its train job runs it (the smoke profile runs only some of them)."""
    from workflow.papers.stbp import train

    p = {"split": [0.6, 0.2, 0.2], "x_len": 12, "y_len": 12, "d": 4, "dropout": 0.0, "lr": 0.01, "batch": 64,
         "max_epochs": 1, "patience": 1}
    r = train.run(method, tiny_stream, 0, p, log=lambda *_: None)
    assert [y["year"] for y in r["years"]] == [0, 1, 2] and [y["n_nodes"] for y in r["years"]] == [6, 8, 10]
    assert all(np.isfinite(y["mae_avg"]) and np.isfinite(y["shuffled_mae_avg"]) for y in r["years"])
    assert np.isfinite(r["backward"]["mae_year0_final"]) and r["years"][0]["trained"]
    later = [y["trainable"] for y in r["years"][1:]]
    if method in ("stbp", "stbp_no_freq", "stbp_shuffled_bank"):
        assert later == [3 * 4 * 8, 3 * 4 * 10]  # only the bank: 3 d values per node
    if method in ("static", "stbp_no_bank_mod"):
        assert later == [0, 0] and not any(y["trained"] for y in r["years"][1:])


def test_the_a_a_nulls_put_each_comparator_of_another_seed_in_stbps_place():
    rows = []
    for seed in (0, 1, 2):
        t = _years_table().assign(seed=seed)
        for method, mae in (("trafficstream_lite", 12.0 + seed), ("finetune_all", 9.0 + seed), ("retrain", 11.0 - seed)):
            t.loc[t.method == method, E.METRIC_COLS + E.NODE_COLS] = mae
        rows.append(t)
    years = pd.concat(rows, ignore_index=True)
    back = pd.DataFrame({"dataset": ["stream"], "method": ["stbp"], "seed": [0], "mae_year0_final": [1.0],
                         "mae_year0_initial": [1.0]})
    own = E.measure(years, back)
    c = E.controls_of(years, back)
    # seed s shows the comparator's seed s - 1 (cyclically), against the comparator's seed s; per (seed, year)
    assert c["aa_trafficstream_eac"]["k1_ratio_vs_trafficstream"] == pytest.approx([14 / 12] * 2 + [12 / 13] * 2 + [13 / 14] * 2)
    # K1b's comparator is the better of finetune_all (9, 10, 11) and retrain (11, 10, 9) in each unit: 9, 10, 9
    assert c["aa_finetune_retrain"]["k1_ratio_vs_same_backbone"] == pytest.approx([9 / 9] * 2 + [9 / 10] * 2 + [10 / 9] * 2)
    assert c["aa_retrain"]["k2_time_ratio_vs_retrain"] == pytest.approx([1.0] * 3)  # CPU time is the same in every seed
    assert c["aa_backbone_only"]["k4_night_ratio_vs_backbone_only"] == pytest.approx([1.0] * 3)
    assert c["aa_trafficstream"]["p1_ratio_vs_trafficstream"] == []  # no pedestrian runs: no value, not a missing metric
    assert own == E.measure(years, back) and own["k1_ratio_vs_trafficstream"] == pytest.approx(
        [10 / 12] * 2 + [10 / 13] * 2 + [10 / 14] * 2)  # STBP's own values untouched
