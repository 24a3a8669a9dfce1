"""Tests for ``semhitok`` (workflow/papers/semhitok): the image sets, the tokenizers' routing and token ids, the
metrics with known answers, the plan and the claims' measurement."""
import numpy as np
import pandas as pd
import pytest
import torch

from workflow.core.params import ParamsError
from workflow.papers.semhitok import evaluate as E
from workflow.papers.semhitok import methods as M
from workflow.papers.semhitok import plan, world

torch.set_num_threads(1)


def test_textured_digits_split_by_original_digit_and_vary_only_the_nuisances():
    d = world.textured_digits(2, 0.1, 0.2, 0.5, np.random.default_rng(0))
    assert {s: len(v["x"]) for s, v in d.items()} == {"test": 718, "val": 360, "train": 2516}
    for part in d.values():
        assert part["x"].shape[1:] == (3, 16, 16) and part["x"].min() >= 0 and part["x"].max() <= 1
    # two renderings of one digit: the same mask and label, other colours
    train = d["train"]
    np.testing.assert_array_equal(train["mask"][0], train["mask"][1])
    assert train["y"][0] == train["y"][1] and not np.allclose(train["x"][0], train["x"][1])
    masks = {s: {m.tobytes() for m in v["mask"]} for s, v in d.items()}
    assert not masks["train"] & masks["test"] and not masks["val"] & masks["test"]


def hue(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The hue of each image's most-stroke pixel (the foreground colour)."""
    import colorsys

    flat = mask.reshape(len(mask), -1).argmax(1)
    rgb = x.reshape(len(x), 3, -1)[np.arange(len(x)), :, flat]
    return np.array([colorsys.rgb_to_hsv(*c)[0] for c in rgb])


def test_the_digits_colour_depends_on_the_class_within_hue_spread():
    masks, y = world.digit_masks()
    masks, y = masks[:400], y[:400]
    x, _ = world.render(masks, y, 0.05, np.random.default_rng(0))
    solid = masks.reshape(400, -1).max(1) > 0.99  # a fully covered pixel: its colour is fg plus noise only
    off = (hue(x, masks) - y / 10 + 0.5) % 1.0 - 0.5  # the hue's distance from the class's, on the circle
    assert np.abs(off[solid]).max() < 0.08
    x, _ = world.render(masks, y, 0.5, np.random.default_rng(0))  # the spec's set: any hue for any class
    off = (hue(x, masks) - y / 10 + 0.5) % 1.0 - 0.5
    assert np.abs(off[solid]).max() > 0.4


def test_the_probe_questions_follow_the_class():
    q = world.questions("digits", np.array([0, 3, 6, 9]))
    assert q.tolist() == [[0, 1, 0], [3, 0, 0], [6, 1, 1], [9, 0, 1]]
    q = world.questions("fashion", np.array([0, 5, 8]))  # T-shirt (upper body), sandal (footwear), bag
    assert q.tolist() == [[0, 0, 1], [5, 1, 0], [8, 0, 0]]


def test_frechet_distance_known_answers():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4000, 3))
    assert M.frechet_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    # same covariance, mean shifted by (1, 2, 0): the distance is the squared shift
    assert M.frechet_distance(a, a + np.array([1.0, 2.0, 0.0])) == pytest.approx(5.0, rel=1e-6)
    # N(0, I) against N(0, 4I) in 3 dims: tr(I + 4I - 2 * 2I) = 3
    assert M.frechet_distance(a, 2 * a) == pytest.approx(3.0 * a.var(0).mean(), rel=0.05)


def test_patches_are_the_token_grid_in_row_major_order():
    x = np.arange(2 * 3 * 16 * 16, dtype=np.float32).reshape(2, 3, 16, 16)
    p = M.patches(x)
    assert p.shape == (32, 48)
    np.testing.assert_array_equal(p[5].reshape(3, 4, 4), x[0, :, 4:8, 4:8])  # patch 5: grid row 1, column 1


def test_coupling_is_zero_for_codes_that_explain_the_patches_and_one_for_random_codes():
    rng = np.random.default_rng(0)
    colours = rng.uniform(size=(4, 3))
    codes = rng.integers(0, 4, (200, 16))
    x = colours[codes].transpose(0, 2, 1).reshape(200, 3, 4, 4).repeat(4, 2).repeat(4, 3)  # each patch one colour
    assert M.coupling(x, codes) == pytest.approx(0.0, abs=1e-9)
    assert M.coupling(x, rng.integers(0, 4, (200, 16))) == pytest.approx(1.0, abs=0.05)


def frozen_nets(n_sem=4):
    torch.manual_seed(0)
    teacher, sem = M.Teacher(10).eval(), M.SemanticVQ(n_sem, 0).eval()
    return teacher, sem


@pytest.mark.parametrize("kind,vocab", [("sghc", 8), ("flat", 8), ("pixel", 8), ("semonly", 4), ("joint", 8),
                                        ("random", 8), ("coupled", 8), ("widepixel", 8)])
def test_every_tokenizer_gives_16_tokens_inside_its_vocabulary(kind, vocab):
    teacher, sem = frozen_nets()
    tok = M.Tokenizer(kind, 4, 2, sem, teacher, 0, lam=1.0).eval()
    x = torch.rand(3, 3, 16, 16)
    route = torch.randint(0, 4, (48,)) if kind == "random" else None
    rec, tokens, _, codebook = tok(x, route)
    assert rec.shape == x.shape and tokens.shape == (3, 16) and tok.vocab == vocab
    assert tokens.min() >= 0 and tokens.max() < vocab
    k = tok.semantic_codes(x).reshape(3, 16)
    if kind in ("sghc", "flat", "coupled"):  # the unified id k * m + j: its semantic part is the patch's semantic code
        assert torch.equal(tokens // 2, k)
    if kind == "random":
        assert torch.equal(tokens // 2, route.reshape(3, 16))
    if kind == "semonly":
        assert torch.equal(tokens, k)


def test_training_a_tokenizer_leaves_the_frozen_networks_untouched():
    teacher, sem = frozen_nets()
    before = {k: v.clone() for k, v in {**teacher.state_dict(), **sem.state_dict()}.items()}
    tok = M.Tokenizer("sghc", 4, 2, sem, teacher, 0)
    x = np.random.default_rng(0).uniform(size=(32, 3, 16, 16)).astype(np.float32)
    M.fit_tokenizer(tok, x, None, {"epochs": 1, "batch": 16, "lr": 0.01, "perceptual": 0.1},
                    np.random.default_rng(0), lambda *a: None)
    after = {**teacher.state_dict(), **sem.state_dict()}
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not tok.training and not teacher.training


def test_psnr_and_ssim_of_a_perfect_and_a_noisy_reconstruction():
    x = np.random.default_rng(0).uniform(size=(4, 3, 16, 16)).astype(np.float32)
    noisy = (x + 0.1).astype(np.float32)  # MSE 0.01: PSNR exactly 20 dB
    assert M.psnr_ssim(x, noisy)[0] == pytest.approx(20.0, abs=1e-3)
    assert M.psnr_ssim(x, x * 0.999)[1] > 0.99


def test_variants_and_their_kinds():
    p = {"variants": ["sghc", "pixel"], "lambdas": [0.1, 3]}
    assert plan.variants(p) == ["sghc", "pixel", "joint_0.1", "joint_3"]
    assert plan.kind_of("joint_0.3") == ("joint", 0.3) and plan.kind_of("sghc") == ("sghc", 0.0)
    for bad in ("joint", "sghc_1", "vqgan"):
        with pytest.raises(ValueError, match="unknown tokenizer variant"):
            plan.kind_of(bad)
    assert plan.nets_jobs({"datasets": ["digits", "fashion"], "seeds": {"digits": [0, 1], "fashion": [0]}}) == [
        ("digits", 0), ("digits", 1), ("fashion", 0)]


def test_the_plan_check_names_what_is_missing():
    ok = {"plan": {"datasets": ["digits"], "seeds": {"digits": [0]}, "lambdas": [1],
                   "variants": ["sghc", "flat", "pixel", "semonly", "random", "coupled"]}}
    plan.check(ok)
    with pytest.raises(ParamsError, match=r"lacks \['random'\]"):
        plan.check({"plan": {**ok["plan"], "variants": ["sghc", "flat", "pixel", "semonly", "coupled"]}})
    with pytest.raises(ParamsError, match="no seeds for \\['fashion'\\]"):
        plan.check({"plan": {**ok["plan"], "datasets": ["digits", "fashion"]}})


def run(variant, psnr, probe, rfd=10.0, rho=0.5, seed=0):
    return {"dataset": "digits", "seed": seed, "variant": variant, "psnr": psnr, "probe": probe, "rfd": rfd,
            "rho_routing": rho}


def test_measure_computes_each_claim_metric_and_a_control_in_sghcs_place():
    from workflow.core import claims

    table = pd.DataFrame([run("sghc", 20.0, 0.90), run("flat", 19.5, 0.90), run("pixel", 20.2, 0.70, rfd=8.0),
                          run("semonly", 15.0, 0.905), run("random", 19.0, 0.60, rho=1.0),
                          run("joint_0.1", 20.5, 0.70), run("joint_3", 19.8, 0.89)])
    nets = pd.DataFrame([{"dataset": "digits", "seed": 0, "teacher_acc": 0.9, "probe_continuous": 0.95}])
    m = E.measure(table, nets, "digits")
    assert m["k1_probe_minus_semonly"] == [pytest.approx(-0.005)] and m["k1_probe_minus_pixel"] == [pytest.approx(0.2)]
    assert m["k2_psnr_minus_pixel"] == [pytest.approx(-0.2)] and m["k2_psnr_minus_semonly"] == [pytest.approx(5.0)]
    assert m["k2_rfd_over_pixel"] == [pytest.approx(1.25)]
    assert m["k3_dominating_lambdas"] == [1.0]  # joint_3: probe 0.89 >= 0.89, PSNR 19.8 >= 19.7
    assert m["k4_psnr_minus_flat"] == [pytest.approx(0.5)] and m["k4_rho_sem"] == [0.5]
    assert m["k0_teacher_acc"] == [0.9]
    control = E.measure(claims.stand_in(table, "variant", E.CONTROLS["random_routing"]), nets, "digits")
    assert control["k1_probe_minus_pixel"] == [pytest.approx(-0.1)] and control["k4_rho_sem"] == [1.0]
    assert control["k3_dominating_lambdas"] == [2.0]


def test_the_aa_nulls_put_another_seeds_comparator_in_sghcs_place():
    """Two seeds: the comparator of the other seed in SGHC's place (K3: the middle lambda); one seed gives no value."""
    def seed(k, pixel, flat, joint):
        return [run("sghc", 20.0, 0.90, seed=k), run("flat", flat, 0.90, seed=k), run("pixel", pixel, 0.70, seed=k),
                run("semonly", 15.0, 0.905, seed=k), run("random", 19.0, 0.60, seed=k),
                run("joint_0.1", 20.5, 0.70, seed=k), run("joint_1", joint, 0.80, seed=k),
                run("joint_3", 15.0, 0.89, seed=k)]
    table = pd.DataFrame(seed(0, 20.2, 19.5, 17.0) + seed(1, 21.0, 19.0, 17.5))
    nets = pd.DataFrame([{"dataset": "digits", "seed": k, "teacher_acc": 0.9, "probe_continuous": 0.95}
                         for k in (0, 1)])
    aa = E.aa_nulls(table, nets, E.measure(table, nets, "digits"))
    assert aa["aa_pixel"]["k2_psnr_minus_pixel"] == pytest.approx([0.8, -0.8])
    assert aa["aa_flat"]["k4_psnr_minus_flat"] == pytest.approx([-0.5, 0.5])
    assert aa["aa_semonly"]["k1_probe_minus_semonly"] == pytest.approx([0.0, 0.0])
    assert aa["aa_joint"]["k3_dominating_lambdas"] == [0.0, 1.0]  # joint_1 at 17.5 dB dominates 17.0, not back
    one = table[table.seed.eq(0)]
    assert np.isnan(E.aa_nulls(one, nets, E.measure(one, nets, "digits"))["aa_flat"]["k4_psnr_minus_flat"]).all()


def test_the_coupled_placebo_trains_its_own_semantic_codebook_with_the_pixel_loss():
    """K3's placebo: SGHC whose semantic codebook is learned in the same steps as the pixel sub-codebooks, the pixel
    loss reaching the semantic encoder; stage 1's frozen codebook and the teacher untouched, the sizes SGHC's."""
    teacher, sem = frozen_nets()
    before = {k: v.clone() for k, v in {**teacher.state_dict(), **sem.state_dict()}.items()}
    tok = M.Tokenizer("coupled", 4, 2, sem, teacher, 0)
    sghc = M.Tokenizer("sghc", 4, 2, sem, teacher, 0)
    assert tok.sem is not sem and tok.vocab == sghc.vocab
    assert sum(q.numel() for q in tok.parameters() if q.requires_grad) == (
        sum(q.numel() for q in sghc.parameters() if q.requires_grad) + sum(q.numel() for q in tok.sem.parameters()))
    x = torch.rand(8, 3, 16, 16)
    tok.train()
    rec, _, aux, _ = tok(x)
    torch.nn.functional.mse_loss(rec, x).backward()  # the pixel loss alone reaches the semantic encoder
    assert tok.sem.enc[0].weight.grad is not None and tok.sem.enc[0].weight.grad.abs().sum() > 0
    assert aux.item() > 0  # the stage-1 loss (feature reconstruction and commitment) is in the auxiliary loss
    start = tok.sem.enc[0].weight.detach().clone()
    M.fit_tokenizer(tok, x.numpy(), None, {"epochs": 1, "batch": 4, "lr": 0.01, "perceptual": 0.1},
                    np.random.default_rng(0), lambda *a: None)
    assert not torch.equal(start, tok.sem.enc[0].weight)
    after = {**teacher.state_dict(), **sem.state_dict()}
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("kind,width", [("sghc", 16 + 8), ("flat", 16 + 8), ("random", 16 + 8), ("coupled", 16 + 8),
                                        ("semonly", 16), ("pixel", 8), ("joint", 8), ("widepixel", 16)])
def test_the_probe_reads_the_code_vectors_each_token_id_names(kind, width):
    """The understanding probe's input: per token the semantic code vector, then the pixel code vector, the codes the
    token id names (the random control's id names its random route, not the patch's semantic code)."""
    teacher, sem = frozen_nets()
    tok = M.Tokenizer(kind, 4, 2, sem, teacher, 0, lam=1.0).eval()
    x = torch.rand(3, 3, 16, 16)
    route = torch.randint(0, 4, (48,)) if kind == "random" else None
    with torch.no_grad():
        _, tokens, _, codebook = tok(x, route)
    assert codebook.shape == (3, 16, width)
    if kind in ("sghc", "random"):  # the unified id names both vectors: semantic code id // m, pixel code id
        ids = tokens.reshape(-1)
        assert torch.allclose(codebook.reshape(48, -1)[:, :16], sem.vq.codes[ids // 2])
        assert torch.allclose(codebook.reshape(48, -1)[:, 16:], tok.vq.codes[ids], atol=1e-6)
    if kind == "pixel":
        assert torch.allclose(codebook.reshape(48, -1), tok.vq.codes[tokens.reshape(-1)], atol=1e-6)


def test_the_baselines_have_the_specs_code_width_and_the_widened_one_sghcs_decoder_input():
    teacher, sem = frozen_nets()
    width = {kind: M.Tokenizer(kind, 4, 2, sem, teacher, 0).dec[0].in_channels
             for kind in ("sghc", "flat", "pixel", "joint", "widepixel", "semonly")}
    assert width == {"sghc": 16, "flat": 16, "pixel": 8, "joint": 8, "widepixel": 16, "semonly": 16}
