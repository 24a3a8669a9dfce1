"""Tests for ``refusion`` (workflow/papers/refusion): the slot objective, the decoder against its no-cache reference,
the counts, the controls and the metrics, on hand-made cases."""
import math

import pandas as pd
import pytest
import torch

from workflow.core.params import ParamsError
from workflow.lib import listop
from workflow.papers.refusion import evaluate as E
from workflow.papers.refusion import methods as M
from workflow.papers.refusion import plan

torch.set_num_threads(1)
V = M.vocab()


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return M.build({"d": 32, "layers": 2, "heads": 4}, "refusion", len(V)).eval()


@pytest.fixture(scope="module")
def prompts():
    pairs = M.problems("chain", 0, 2, {"min_ops": 2, "max_ops": 5}) + M.problems("listop", 0, 2, {})
    return M.encode(V, pairs)[0]


@pytest.mark.parametrize("setting", [M.Setting(), M.Setting(tau_slot=0.0, tau_tok=0.0), M.Setting(2, 1, 2.0, 2.0),
                                     M.Setting(8, 4, 0.5, 0.2)])
def test_the_cached_decoder_gives_the_tokens_of_its_no_cache_reference(model, prompts, setting):
    for i in range(len(prompts)):
        cached, counts, rounds = M.refusion_decode(model, prompts[i:i + 1], setting, V.mask, V.eos)
        plain, plain_counts, _ = M.refusion_decode(model, prompts[i:i + 1], setting, V.mask, V.eos, use_cache=False)
        assert cached == plain and len(cached) == M.GEN_LEN
        assert counts.forwards == plain_counts.forwards and counts.queries_full == plain_counts.queries
        assert counts.queries < plain_counts.queries
        per_block = -(-M.GEN_LEN // setting.slot // setting.serial_blocks)
        last = [max([r for r in rounds[b:b + per_block] if r >= 0], default=-1) for b in range(0, len(rounds), per_block)]
        first = [min([r for r in rounds[b:b + per_block] if r >= 0], default=10**6) for b in range(0, len(rounds), per_block)]
        assert all(last[b] < first[b + 1] for b in range(len(last) - 1))  # serial blocks: left to right


def test_unverified_planning_commits_a_block_per_round_and_one_slot_decoding_is_serial(model, prompts):
    x = prompts[:1]
    _, counts, rounds = M.refusion_decode(model, x, M.Setting(4, 2, 0.0, 0.0), V.mask, V.eos)
    assert rounds == [0, 0, 0, 0, 1, 1, 1, 1] and counts.forwards == 4  # a plan and a verify pass per block
    _, counts, rounds = M.refusion_decode(model, x, M.Setting(4, 2, 2.0, 2.0), V.mask, V.eos)
    assert sorted(r for r in rounds if r >= 0) == list(range(sum(r >= 0 for r in rounds)))  # one slot per round
    assert counts.forwards > 8


def test_the_arm_decoder_counts_one_forward_and_query_per_token(model, prompts):
    arm = M.build({"d": 32, "layers": 2, "heads": 4}, "arm", len(V)).eval()
    tokens, counts = M.arm_decode(arm, prompts[:1], V.eos)
    assert counts.forwards == counts.queries == M.answer_length(tokens, V.eos)
    assert M.arm_decode_batch(arm, prompts, V.eos)[0].tolist() == tokens


def test_the_slot_objective_puts_clean_slots_first_with_their_positions():
    """A recording model sees: the prompt at positions 0..P-1, then clean slots (in some order) before masked ones,
    every slot's tokens at their own consecutive positions; masked slots carry the mask token."""
    seen = {}

    class Recorder(torch.nn.Module):
        def forward(self, x, positions):
            seen["x"], seen["positions"] = x.clone(), positions.clone()
            return torch.zeros(*x.shape, len(V), requires_grad=True)

    prompt = torch.zeros(8, M.PROMPT_LEN, dtype=torch.long)
    response = torch.arange(M.GEN_LEN).repeat(8, 1) % 10 + 3
    M.refusion_loss(Recorder(), prompt, response, 4, V.mask, torch.Generator().manual_seed(0))
    x, pos = seen["x"][:, M.PROMPT_LEN:], seen["positions"]
    assert torch.equal(pos[:, :M.PROMPT_LEN], torch.arange(M.PROMPT_LEN).expand(8, -1))
    for row in range(8):
        slots = (pos[row, M.PROMPT_LEN:] - M.PROMPT_LEN).view(-1, 4)
        assert torch.equal(slots - slots[:, :1], torch.arange(4).expand(8, -1))  # whole slots, in order inside
        masked = (x[row].view(-1, 4) == V.mask).all(1)
        clean_before_masked = masked.int().diff() >= 0
        assert clean_before_masked.all()
        assert sorted(slots[masked, 0].tolist()) == slots[masked, 0].tolist()  # masked slots in original order
        clean = ~masked
        assert torch.equal(x[row].view(-1, 4)[clean], response[row].gather(0, slots[clean].reshape(-1)).view(-1, 4))


def test_list_operations_by_their_reference():
    assert listop.transform("rev", "123456") == "654321"
    assert listop.transform("rot2", "123456") == "345612"
    assert listop.transform("inc3", "789012") == "012345"
    for prompt, response in M.problems("listop", 4, 50, {}):
        assert listop.solve(prompt) == response and M.correct("listop", prompt, response)


def speed(seed, tps):
    return pd.DataFrame([dict(decoder=d, task=t, items=1, generated=v, seconds=1.0, seed=seed)
                         for d, v in tps.items() for t in M.TASKS])


def decodes(seed, rows):
    """rows: decoder -> (accuracy, generated, forwards, queries, queries without cache) per problem, both tasks."""
    out = []
    for decoder, (acc, gen, fwd, q, full) in rows.items():
        for task in M.TASKS:
            for i in range(10):
                out.append(dict(decoder=decoder, task=task, problem=i, correct=i < 10 * acc, generated=gen,
                                forwards=fwd, queries=q, queries_no_cache=full, seed=seed))
    return pd.DataFrame(out)


def test_metrics_and_the_no_cache_control():
    d = decodes(0, {"arm": (0.9, 10, 10, 10, 300), "mdm/s32": (0.5, 10, 32, 32 * 56, 32 * 56),
                    "refusion": (0.8, 10, 4, 40, 400), "refusion_plan_only": (0.4, 10, 2, 20, 100),
                    "refusion_one_slot": (0.8, 10, 20, 80, 600)})
    s = speed(0, {"arm": 100, "mdm/s32": 20, "refusion": 150, "refusion_no_cache": 50})
    m = E.measure(d, s)
    assert m["k1_refusion_minus_1_15_mdm"] == [pytest.approx(0.8 - 1.15 * 0.5)]
    assert m["k2_qte_ratio_mdm_over_refusion"] == [pytest.approx(32 * 56 / 40)]
    assert m["k4_tps_ratio_refusion_over_arm"] == [pytest.approx(1.5)] and m["k4_tokens_per_forward"] == [2.5]
    no_cache = E.measure(*E.with_control(d, s, E.CONTROLS["no_cache"]))
    assert no_cache["k2_qte_ratio_mdm_over_refusion"] == [pytest.approx(32 * 56 / 400)]
    assert no_cache["k2_tps_ratio_refusion_over_mdm"] == [pytest.approx(2.5)]
    assert no_cache["k1_refusion_minus_1_15_mdm"] == m["k1_refusion_minus_1_15_mdm"]  # same tokens
    plan_only = E.measure(*E.with_control(d, s, E.CONTROLS["plan_only"]))
    assert plan_only["k3_refusion_minus_arm"] == [pytest.approx(-0.5)]


def test_the_one_slot_control_of_k4_is_timed_on_its_own():
    """K4's control puts the one-slot decoder in ReFusion's place in the timings too, never ReFusion's own clock."""
    d = decodes(0, {"arm": (0.9, 10, 10, 10, 300), "mdm/s32": (0.5, 10, 32, 32 * 56, 32 * 56),
                    "refusion": (0.8, 10, 4, 40, 400), "refusion_one_slot": (0.8, 10, 20, 80, 600)})
    s = speed(0, {"arm": 100, "mdm/s32": 20, "refusion": 150, "refusion_one_slot": 40})
    one_slot = E.measure(*E.with_control(d, s, E.CONTROLS["one_slot"]))
    assert one_slot["k4_tps_ratio_refusion_over_arm"] == [pytest.approx(0.4)]
    assert one_slot["k4_tokens_per_forward"] == [pytest.approx(0.5)]


def test_params_the_schema_cannot_check_are_rejected():
    ok = {"data": {"min_ops": 2, "max_ops": 5, "test": 20}, "train": {"slot_sizes": [2, 4]},
          "decode": {"slot": 4, "serial_blocks": 2, "mdm_steps": [32], "speed_items": 5}}
    plan.check(ok)
    with pytest.raises(ParamsError, match="slot size 3 does not divide"):
        plan.check(ok | {"train": {"slot_sizes": [3]}})
    with pytest.raises(ParamsError, match="must include 32"):
        plan.check(ok | {"decode": ok["decode"] | {"mdm_steps": [16]}})
    with pytest.raises(ParamsError, match="serial_blocks 9 exceeds the 8 slots"):
        plan.check(ok | {"decode": ok["decode"] | {"serial_blocks": 9}})


def test_the_aa_nulls_put_another_seeds_comparator_in_refusions_place():
    """Two seeds: the MDM (or the ARM) of the other seed in ReFusion's place, in the decodes and in the timings."""
    rows = {"arm": (0.9, 10, 10, 10, 300), "mdm/s32": (0.5, 10, 32, 32 * 56, 32 * 56),
            "refusion": (0.8, 10, 4, 40, 400)}
    d = pd.concat([decodes(0, rows), decodes(1, rows | {"mdm/s32": (0.2, 10, 32, 16 * 56, 16 * 56),
                                                        "arm": (0.6, 10, 10, 10, 300)})], ignore_index=True)
    s = pd.concat([speed(0, {"arm": 100, "mdm/s32": 20, "refusion": 150}),
                   speed(1, {"arm": 120, "mdm/s32": 40, "refusion": 150})], ignore_index=True)
    aa = E.aa_nulls(d, s, E.measure(d, s))
    assert aa["aa_mdm"]["k1_refusion_minus_1_15_mdm"] == pytest.approx([0.2 - 1.15 * 0.5, 0.5 - 1.15 * 0.2])
    assert aa["aa_mdm"]["k2_qte_ratio_mdm_over_refusion"] == pytest.approx([2.0, 0.5])
    assert aa["aa_mdm"]["k2_tps_ratio_refusion_over_mdm"] == pytest.approx([2.0, 0.5])
    assert aa["aa_arm"]["k3_refusion_minus_arm"] == pytest.approx([-0.3, 0.3])
    assert aa["aa_arm"]["k4_tokens_per_forward"] == [1.0, 1.0]
    assert aa["aa_mdm_for_arm"]["k5_arm_minus_mdm"] == pytest.approx([0.2 - 0.5, 0.5 - 0.2])  # K5: MDM against MDM
    one = E.aa_nulls(d[d.seed.eq(0)], s[s.seed.eq(0)], E.measure(d[d.seed.eq(0)], s[s.seed.eq(0)]))
    assert math.isnan(one["aa_arm"]["k3_refusion_minus_arm"][0])


def test_the_one_slot_placebo_of_k4_is_timed_in_refusions_place_and_an_untimed_control_has_no_time():
    d = decodes(0, {"arm": (0.9, 10, 10, 10, 300), "mdm/s32": (0.5, 10, 32, 32 * 56, 32 * 56),
                    "refusion": (0.8, 10, 4, 40, 400), "refusion_plan_only": (0.4, 10, 2, 20, 100),
                    "refusion_one_slot": (0.8, 10, 20, 80, 600)})
    s = speed(0, {"arm": 100, "mdm/s32": 20, "refusion": 150, "refusion_no_cache": 50, "refusion_one_slot": 60})
    one = E.measure(*E.with_control(d, s, E.CONTROLS["one_slot"]))
    assert one["k4_tps_ratio_refusion_over_arm"] == [pytest.approx(0.6)] and one["k4_tokens_per_forward"] == [0.5]
    untimed = E.measure(*E.with_control(d, s[s.decoder.ne("refusion_one_slot")], E.CONTROLS["one_slot"]))
    assert math.isnan(untimed["k4_tps_ratio_refusion_over_arm"][0])  # not ReFusion's own time
    assert untimed["k4_tokens_per_forward"] == [0.5]
