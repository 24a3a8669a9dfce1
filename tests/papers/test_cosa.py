"""Tests for the ``cosa`` core algorithms (workflow/papers/cosa). Tiny sizes, one torch thread."""

import numpy as np
import pandas as pd
import pytest
import torch

from workflow.papers.cosa import datasets as M
from workflow.papers.cosa import models as Base
from workflow.papers.cosa import stream as S
from workflow.lib.training import state_hash

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny():
    """Short ett_like (level shift), L=48, H=24, DLinear trained a few epochs."""
    raw = M.ett_like(0, n_steps=1600)
    split = M.chrono_split(len(raw))
    z, _ = M.zscore(raw, split["train"])
    base = Base.make_base("dlinear", 48, 24, 7, seed=0)
    Base.train_base(base, z, split, 48, 24, epochs=4, patience=2, seed=0)
    return {"z": z, "split": split, "base": base, "L": 48, "H": 24}


# ------------------------------------------------------------------------------------------- data
def test_ett_like_deterministic_shape_and_shift():
    a = M.ett_like(3)
    assert a.shape == (8760, 7) and a.dtype == np.float64
    assert np.array_equal(a, M.ett_like(3))
    assert not np.array_equal(a, M.ett_like(4))
    none = M.ett_like(3, shift="none")
    mixed = M.ett_like(3, shift="mixed")
    b = M.chrono_split(8760)["test"][0]
    assert b == 7008
    # the shift only touches the test segment
    assert np.array_equal(a[:b], none[:b]) and np.array_equal(mixed[:b], none[:b])
    sd = none[: M.chrono_split(8760)["train"][1]].std(axis=0)
    step = (a - none)[b:].mean(axis=0) / sd          # level step +0.8 sigma (plus 0.3 * mean dev)
    assert np.all((step > 0.65) & (step < 0.95))
    ratio = a[b:].std(axis=0) / none[b:].std(axis=0)  # amplitude x1.3
    assert np.all((ratio > 1.2) & (ratio < 1.4))
    ramp = (mixed - none)[b:].mean(axis=0) / sd       # ramp to +0.5 sigma over 500 h
    assert np.all((ramp > 0.3) & (ramp < 0.6))
    # after z-scoring with train stats, the test segment sits higher than val
    sp = M.chrono_split(8760)
    z, st = M.zscore(a, sp["train"])
    assert np.all(z[b:].mean(0) - z[sp["val"][0]:b].mean(0) > 0.4)
    assert np.allclose(z[: sp["train"][1]].mean(0), 0, atol=1e-10)
    assert np.allclose(z[: sp["train"][1]].std(0), 1)
    assert st["mean"].shape == (7,)
    # optional val_shift (off by default) only changes the val segment
    v = M.ett_like(3, val_shift=0.5)
    assert np.array_equal(v[: sp["train"][1]], a[: sp["train"][1]]) and np.array_equal(v[b:], a[b:])
    assert np.all((v - a)[sp["val"][0]:b].mean(0) / sd > 0.3)


def test_chrono_split_and_zscore_1d():
    assert M.chrono_split(100) == {"train": (0, 60), "val": (60, 80), "test": (80, 100)}
    z, st = M.zscore(np.arange(10.0), (0, 5))
    assert z.shape == (10,)
    assert np.isclose(st["mean"][0], 2.0) and np.isclose(z[2], 0.0)


# ------------------------------------------------------------------------------------------- PAAS
def test_paas_period_recovers_sinusoid():
    t = np.arange(96)
    assert S.paas_period(np.sin(2 * np.pi * t / 24)) == 24
    # the highest-power channel decides: strong period-12 channel beats weak period-24 channel
    x = np.stack([0.1 * np.sin(2 * np.pi * t / 24), 3.0 * np.sin(2 * np.pi * t / 12 + 0.3)], axis=1)
    assert S.paas_period(x) == 12
    assert S.paas_period(np.ones((96, 2))) == 24          # f = 0 guard -> official fallback
    assert S.paas_period(np.ones((96, 2)), default=7) == 7


# ---------------------------------------------------------------------------------------- context
def test_context_buffer_semantics():
    buf = S.ContextBuffer(5)
    assert np.array_equal(buf.vector(), np.zeros(5))       # zeros at start
    for v in (1.0, 2.0, 3.0):
        buf.push(v)
    assert np.array_equal(buf.vector(), [3, 2, 1, 1, 1])   # most recent first, padded with oldest
    for v in (4.0, 5.0, 6.0, 7.0):
        buf.push(v)
    assert np.array_equal(buf.vector(), [7, 6, 5, 4, 3])
    assert S.ContextBuffer(0).vector().shape == (0,)


def test_stream_context_only_fully_matured_batches():
    """Ramp series x_t = t/100, fixed batches of B=4, L=4, H=6, K=3.

    Batch b is processed at obs_end = s + 4b + 3; batch b' is fully observed iff s + 4b' + 3 + 6 <= obs_end,
    i.e. b' <= b - 2 (batch b-1 is only partially observed and must NOT be in the context). Its GT mean is
    mean_{k<4, h<6} (s + 4b' + k + h)/100 = (s + 4b' + 4)/100.
    """
    s, L, H, B, K = 10, 4, 6, 4, 3
    x = (np.arange(60, dtype=np.float64) / 100.0)[:, None]
    base = Base.make_base("dlinear", L, H, 1)
    r = S.run_stream(base, x, (s, 50), L, H, "cosa", context_size=K, batch_size=B, lr=1e-3, steps=1)
    assert r["batch_sizes"][:-1] == [B] * (len(r["batch_sizes"]) - 1)
    for b, ctx in enumerate(r["context"]):
        matured = [(s + 4 * bp + 4) / 100.0 for bp in range(b - 1)]   # batches 0 .. b-2
        if not matured:
            expected = [0.0] * K
        else:
            recent = matured[::-1][:K]
            expected = recent + [recent[-1]] * (K - len(recent))
        assert np.allclose(ctx, expected, atol=1e-6), (b, ctx, expected)
    # K = 0 (ablation -ctx): empty context
    r0 = S.run_stream(base, x, (s, 50), L, H, "cosa_no_ctx", batch_size=B, steps=1)
    assert all(len(c) == 0 for c in r0["context"])


def test_partial_mask():
    m = S.partial_mask(4, 2)
    assert m.tolist() == [[True, True], [True, True], [True, False], [False, False]]


def test_calr_known_values():
    c = S.CALR(1e-3, max_lr=5e-3, min_lr=1e-4)
    assert c(1.0, 0, 3) == 1e-3                        # per-batch reset
    lr1 = c(0.5, 1, 3)                                 # falling by > 0.01 -> x1.05, then cosine 0.75
    assert np.isclose(lr1, 1e-4 + (1.05e-3 - 1e-4) * 0.75)
    lr2 = c(0.5, 2, 3)                                 # trend (0.5 - 1.0) still < -0.01 -> x1.05, cos 0.25
    assert np.isclose(lr2, 1e-4 + (lr1 * 1.05 - 1e-4) * 0.25)


# ---------------------------------------------------------------------------------------- adapter
def test_cosa_adapter_identity_at_init(tiny):
    ad = S.OutputAdapter(24, 5, channels=7, seed=1)
    y0 = torch.randn(3, 24, 7)
    assert torch.equal(ad(y0, torch.randn(5)), y0)
    assert float(ad.gate.detach()) == 0.0
    # in the stream: the first batch (no matured batch, zero context, g = 0) equals the base prediction
    z, sp, base, L, H = tiny["z"], tiny["split"], tiny["base"], tiny["L"], tiny["H"]
    r0 = S.run_stream(base, z, sp["test"], L, H, "no_tta", return_predictions=True)
    r1 = S.run_stream(base, z, sp["test"], L, H, "cosa_no_pogt", lr=3e-3, return_predictions=True)
    b0 = r1["batch_sizes"][0]
    assert np.array_equal(r1["predictions"][:b0], r0["predictions"][:b0])
    assert not np.array_equal(r1["predictions"], r0["predictions"])   # ...and it does adapt later


# --------------------------------------------------------------------------------------- leakage K4
@pytest.mark.parametrize("method,extra", [
    ("cosa", {}), ("tafas_lite", {}), ("last_error", {}), ("cosa_no_gate", {}),
    ("cosa", {"official_adjust": True, "grad_clip": None, "batch_size": 30, "steps": 5}),
    ("cosa_flip_resid", {}), ("cosa_shuffled_ctx", {}), ("cosa_input_gcm", {}),  # the placebos are leakage-free too
])
def test_leakage_mask_future_bit_identical(tiny, method, extra):
    z, sp, base, L, H = tiny["z"], tiny["split"], tiny["base"], tiny["L"], tiny["H"]
    kw = dict(lr=3e-3, steps=3, return_predictions=True)
    kw.update(extra)
    r = S.run_stream(base, z, sp["test"], L, H, method, mask_future=False, **kw)
    rm = S.run_stream(base, z, sp["test"], L, H, method, mask_future=True, **kw)
    assert np.isfinite(rm["predictions"]).all()
    assert np.all(np.isfinite(rm["losses"]))
    assert np.array_equal(r["predictions"], rm["predictions"])
    assert r["losses"] == rm["losses"]
    if method != "last_error":
        assert len(rm["losses"]) > 0


def test_leakage_check_detects_a_leaky_mask(tiny, monkeypatch):
    """Negative control: if the partial step read unobserved GT, the masked run must show it."""
    z, sp, base, L, H = tiny["z"], tiny["split"], tiny["base"], tiny["L"], tiny["H"]
    monkeypatch.setattr(S, "partial_mask", lambda b, h, lookahead=0: torch.ones(b, h, dtype=torch.bool))
    rm = S.run_stream(base, z, sp["test"], L, H, "cosa", mask_future=True, lr=3e-3, return_predictions=True)
    assert not np.all(np.isfinite(rm["losses"]))


# ------------------------------------------------------------------------------ frozen base (K4 b)
@pytest.mark.parametrize("method", ["cosa", "tafas_lite", "cosa_input_gcm"])
def test_only_adapter_params_trained_base_unchanged(tiny, method):
    z, sp, base, L, H = tiny["z"], tiny["split"], tiny["base"], tiny["L"], tiny["H"]
    before = state_hash(base)
    r = S.run_stream(base, z, sp["test"], L, H, method, lr=3e-3)
    assert state_hash(base) == before
    assert all(not p.requires_grad for p in base.parameters())
    assert all(p.grad is None for p in base.parameters())     # no gradient ever reached the base
    if method == "cosa":
        assert sorted(r["trainable"]) == ["bias", "gate", "weight"]
        assert r["adapter_params"] == H * (H + 5) + H + 1
    elif method == "cosa_input_gcm":  # COSA's adapter + TAFAS-lite's input module, nothing else
        assert sorted(r["trainable"]) == ["adapter.bias", "adapter.gate", "adapter.weight", "in_cali.bias",
                                          "in_cali.gating", "in_cali.weight"]
        assert r["adapter_params"] == H * (H + 5) + H + 1 + (L * L + L + 1) * 7
    else:
        assert all(n.startswith(("in_cali.", "out_cali.")) for n in r["trainable"])
        assert r["adapter_params"] == (L * L + L + 1) * 7 + (H * H + H + 1) * 7


# ----------------------------------------------------------------------------------------- sanity
def test_cosa_beats_no_tta_on_level_shift():
    raw = M.ett_like(1, n_steps=3000, shift="level")
    sp = M.chrono_split(len(raw))
    z, _ = M.zscore(raw, sp["train"])
    base = Base.make_base("dlinear", 48, 24, 7, seed=0)
    hist = Base.train_base(base, z, sp, 48, 24, epochs=6, patience=2, seed=0)
    assert hist["epochs_run"] >= 1 and np.isfinite(hist["best_val"])
    r0 = S.run_stream(base, z, sp["test"], 48, 24, "no_tta")
    r1 = S.run_stream(base, z, sp["test"], 48, 24, "cosa", lr=3e-3, steps=3)
    assert r1["mse"] < 0.9 * r0["mse"], (r1["mse"], r0["mse"])
    assert r1["n_windows"] == r0["n_windows"] == sp["test"][1] - sp["test"][0] - 24 + 1
    assert len(r1["gate"]) == len(r1["batch_sizes"]) and r1["window_mse"].shape == (r1["n_windows"],)


def test_select_hparams_uses_validation_grid(tiny):
    z, sp, base, L, H = tiny["z"], tiny["split"], tiny["base"], tiny["L"], tiny["H"]
    res = S.select_hparams(base, z, sp["val"], L, H, "cosa", lrs=(1e-3, 3e-3), steps_grid=(1, 3))
    assert len(res["grid"]) == 4
    assert res["val_mse"] == min(g["val_mse"] for g in res["grid"])
    direct = S.run_stream(base, z, sp["val"], L, H, "cosa", lr=res["lr"], steps=res["steps"])
    assert direct["mse"] == res["val_mse"]                      # deterministic given the seed
    none = S.select_hparams(base, z, sp["val"], L, H, "no_tta")
    assert none["lr"] is None and len(none["grid"]) == 1


# ------------------------------------------------------------------------------- negative controls (issue 10)
def test_partial_mask_lookahead_reads_one_unobserved_step():
    assert S.partial_mask(4, 3, lookahead=1).tolist() == [[True, True, True], [True, True, True],
                                                          [True, True, False], [True, False, False]]
    assert S.partial_mask(4, 3, lookahead=0).sum() == 3 + 2 + 1


def test_stale_gt_control_learns_only_from_training_windows():
    """Ramp x_t = t/100: every context value of the stale control is a GT mean of a window inside the pool
    (0, 20) (< 0.2), while COSA's own contexts come from the stream (> s/100); masking the future changes nothing."""
    s, L, H, B, K = 30, 4, 6, 4, 3
    x = (np.arange(80, dtype=np.float64) / 100.0)[:, None]
    base = Base.make_base("dlinear", L, H, 1)
    kw = dict(context_size=K, batch_size=B, lr=1e-3, steps=1, stale_pool=(0, 20), return_predictions=True)
    own = S.run_stream(base, x, (s, 70), L, H, "cosa", **kw)
    stale = S.run_stream(base, x, (s, 70), L, H, "cosa_stale_gt", **kw)
    filled = [c for c in stale["context"] if any(c)]
    assert filled and all(0.0 < v < 0.2 for c in filled for v in c)
    assert all(v > s / 100 for c in own["context"] if any(c) for v in c)
    masked = S.run_stream(base, x, (s, 70), L, H, "cosa_stale_gt", mask_future=True, **kw)
    assert np.array_equal(masked["predictions"], stale["predictions"])
    with pytest.raises(ValueError, match="stale_pool"):
        S.run_stream(base, x, (s, 70), L, H, "cosa_stale_gt", batch_size=B)


def test_the_placebos_change_only_their_ingredient():
    """Ramp x_t = t/100. cosa_shuffled_ctx: every context value is a matured mean COSA's own buffer also holds, drawn
    at random (not always the last K). cosa_flip_resid: its targets are Y0 + s (Y - Y0), so its context means differ
    from COSA's; both are deterministic given the seed, and a different seed draws differently."""
    s, L, H, B, K = 30, 4, 6, 4, 3
    x = (np.arange(120, dtype=np.float64) / 100.0)[:, None]
    base = Base.make_base("dlinear", L, H, 1)
    kw = dict(context_size=K, batch_size=B, lr=1e-3, steps=1, return_predictions=True)
    own = S.run_stream(base, x, (s, 110), L, H, "cosa", **kw)
    ctx = S.run_stream(base, x, (s, 110), L, H, "cosa_shuffled_ctx", **kw)
    matured = {round(v, 12) for c in own["context"] for v in c}
    assert all(round(v, 12) in matured for c in ctx["context"] for v in c)
    assert ctx["context"] != own["context"] and ctx["adapter_params"] == own["adapter_params"]
    assert ctx["context"] == S.run_stream(base, x, (s, 110), L, H, "cosa_shuffled_ctx", **kw)["context"]
    flip = S.run_stream(base, x, (s, 110), L, H, "cosa_flip_resid", **kw)
    assert flip["context"] != own["context"] and flip["adapter_params"] == own["adapter_params"]
    again = S.run_stream(base, x, (s, 110), L, H, "cosa_flip_resid", **kw)
    other = S.run_stream(base, x, (s, 110), L, H, "cosa_flip_resid", **kw | {"seed": 1})
    assert np.array_equal(again["predictions"], flip["predictions"])
    assert not np.array_equal(other["predictions"], flip["predictions"])


def test_leak_check_passes_cosa_and_flags_the_one_step_leak(tiny):
    from workflow.papers.cosa import tta

    z, sp, base, L, H = tiny["z"], tiny["split"], tiny["base"], tiny["L"], tiny["H"]
    common = dict(context_size=5, l2_reg=1e-4, seed=0, stale_pool=sp["train"])
    ok = tta.leak_check(base, z, sp["test"], L, H, "cosa", {"lr": 3e-3, "steps": 3}, common)
    leaky = tta.leak_check(base, z, sp["test"], L, H, "cosa_leak_one_step", {"lr": 3e-3, "steps": 3}, common)
    assert ok == {"max_abs_pred_change": 0.0, "nonfinite_preds": 0.0, "base_changed": 0.0}
    assert leaky["nonfinite_preds"] > 0 and leaky["base_changed"] == 0.0


def test_measure_puts_a_control_in_cosas_place():
    """Two ett_like seeds x two horizons x one base; K3's unit is (base, seed); the control's metrics come from its rows."""
    from workflow.papers.cosa import evaluate as E

    rows = []
    for seed in (0, 1):
        for h, gain in ((96, 0.1), (336, 0.3)):
            for method, mse in (("no_tta", 1.0), ("cosa", 1.0 - gain), ("tafas_lite", 0.8), ("cosa_stale_gt", 1.1)):
                rows.append({"dataset": "ett_like", "base": "dlinear", "H": h, "seed": seed, "method": method,
                             "mse": mse, "rel_impr": 1.0 - mse, "seconds_per_window": 1.0,
                             "leak_max_abs_pred_change": 0.0 if method == "cosa" else np.nan,
                             "leak_nonfinite_preds": 0.0 if method == "cosa" else np.nan,
                             "leak_base_changed": 0.0 if method == "cosa" else np.nan})
    t = pd.DataFrame(rows)
    m, c = E.measure(t), E.measure(t, "cosa_stale_gt")
    assert m["k1_rel_impr_ett_like"] == pytest.approx([0.1, 0.1, 0.3, 0.3])  # cells sorted by (H, seed)
    assert m["k3_long_minus_short_ett_like"] == pytest.approx([0.2, 0.2])
    assert m["k2_cosa_beats_tafas"] == [0.0, 0.0, 1.0, 1.0]
    assert m["k4_nonfinite_preds_when_future_masked"] == [0.0] * 4
    assert c["k1_rel_impr_ett_like"] == pytest.approx([-0.1] * 4) and c["k3_long_minus_short_ett_like"] == pytest.approx([0.0, 0.0])
    assert "k4_base_changed" not in c  # the stale control was not leak-checked: a claim naming it would be an error
    assert E.measure(t, "cosa_leak_one_step") == {}


def test_the_aa_nulls_put_the_comparator_of_the_next_seed_in_cosas_place():
    """aa_no_tta: no TTA of seed s+1 scored against seed s's no TTA (gain = 1 - mse(s+1)/mse(s)); aa_tafas: TAFAS-lite
    of the other seed against the cell's own; a cell with one seed (co2 here) has no value. COSA's own values come from
    the raw MSEs, whatever a row's precomputed rel_impr says."""
    from workflow.papers.cosa import evaluate as E

    rows = []
    for dataset, seeds in (("ett_like", (0, 1)), ("co2", (0,))):
        for seed in seeds:
            for h in (96, 336):
                for method, mse in (("no_tta", 1.0 + seed), ("cosa", 0.9), ("tafas_lite", 0.8 + 0.1 * seed)):
                    rows.append({"dataset": dataset, "base": "dlinear", "H": h, "seed": seed, "method": method,
                                 "mse": mse, "rel_impr": -9.0, "seconds_per_window": 1.0, "leak_max_abs_pred_change": 0.0,
                                 "leak_nonfinite_preds": 0.0, "leak_base_changed": 0.0})
    t = pd.DataFrame(rows)
    assert E.measure(t)["k1_rel_impr_co2"] == pytest.approx([0.1, 0.1])  # from the MSEs, not the rows' -9
    nulls = E.measure_nulls(t)
    assert set(nulls) == set(E.NULLS) and set(nulls["aa_no_tta"]) == set(E.measure(t))
    aa = nulls["aa_no_tta"]
    assert aa["k1_rel_impr_ett_like"] == pytest.approx([1 - 2 / 1, 1 - 1 / 2] * 2)  # cells sorted by (H, seed)
    assert aa["k1_rel_impr_co2"] == [] and aa["k3_long_minus_short_ett_like"] == pytest.approx([0.0, 0.0])
    tafas = nulls["aa_tafas"]["k2_rel_impr_vs_tafas"]
    assert len(tafas) == 4 and sorted(tafas) == pytest.approx(sorted([(0.8 - 0.9) / 0.8, (0.9 - 0.8) / 0.9] * 2))


# ------------------------------------------------------------------------------------------- plan, checkpoint
def test_plan_lists_every_cell_and_the_traced_one():
    from workflow.papers.cosa import plan

    datasets = {"co2": {"source": "co2", "bases": ["dlinear"], "horizons": [13, 26], "seeds": [0, 1]},
                "ett_like": {"source": "ett_like", "bases": ["dlinear", "mlp"], "horizons": [96, 336], "seeds": [2, 0]}}
    cells = plan.cells(datasets)
    assert len(cells) == 4 + 8 and len(set(cells)) == len(cells)
    assert plan.tta_paths(datasets)[0] == "results/cosa/tta/co2/dlinear_H13_s0.json"
    # Figs. B/C: ett_like at its longest horizon, first base and lowest seed, whatever the order in params
    assert plan.trace_cell(datasets) == ("ett_like", "dlinear", 336, 0)
    assert plan.trace_path(datasets) == "results/cosa/tta/ett_like/dlinear_H336_s0.npz"
    assert plan.trace_cell({"co2": datasets["co2"]}) == ("co2", "dlinear", 26, 0)  # no ett_like: another set's
    assert plan.raw_files(datasets, "co2") == ["data/raw/co2.csv"] and plan.raw_files(datasets, "ett_like") == []


def test_a_saved_base_loads_back_identical(tmp_path):
    from workflow.core.io import save_state

    model = Base.make_base("mlp", 12, 6, 3, seed=1)
    meta = {"kind": "mlp", "lookback": 12, "horizon": 6, "channels": 3}
    save_state(tmp_path / "m.pt", model.state_dict(), meta)
    loaded = Base.load_base(tmp_path / "m.pt")
    assert not loaded.training
    x = torch.randn(2, 12, 3)
    assert torch.equal(model(x), loaded(x))


def test_readers_of_the_real_hourly_series(tmp_path):
    """vic_elec and EPF_FR_BE, which the smoke profile does not run: half-hourly demand summed per hour and
    temperature averaged; one EPF channel per (country, variable), rows in time order."""
    from workflow.papers.cosa import prepare

    vic = pd.DataFrame({"Time": pd.date_range("2012-01-01", periods=4, freq="30min").astype(str),
                        "Demand": [1.0, 2.0, 3.0, 4.0], "Temperature": [10.0, 12.0, 14.0, 18.0]})
    vic.to_csv(tmp_path / "vic_elec.csv", index=False)
    x, names = prepare.from_raw("vic_elec", tmp_path / "vic_elec.csv")
    assert names == ["demand", "temperature"] and np.array_equal(x, [[3.0, 11.0], [7.0, 16.0]])
    hours = ["2015-01-01 01:00:00", "2015-01-01 00:00:00"]  # out of order on purpose
    epf = pd.DataFrame([{"unique_id": c, "ds": h, "y": 10 * i + j, "gen_forecast": 100 + j, "system_load": 200 + j}
                        for i, c in enumerate(["FR", "BE"]) for j, h in enumerate(hours)])
    epf.to_csv(tmp_path / "EPF_FR_BE.csv", index=False)
    x, names = prepare.from_raw("EPF_FR_BE", tmp_path / "EPF_FR_BE.csv")
    assert x.shape == (2, 6) and names[0] in ("BE_y", "FR_y")
    col = {n: x[:, k] for k, n in enumerate(names)}
    assert np.array_equal(col["FR_y"], [1, 0]) and np.array_equal(col["BE_y"], [11, 10])
    assert np.array_equal(col["BE_system_load"], [201, 200])
    data = prepare.build("vic_elec", tmp_path / "vic_elec.csv", 0, (0.5, 0.25, 0.25), seed=0, n_steps=0)
    assert data["channels"].tolist() == ["demand", "temperature"] and data["series"].shape == (2, 2)
