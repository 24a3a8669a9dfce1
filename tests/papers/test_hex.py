"""Tests for ``hex`` (workflow/papers/hex): the vote, the controls and the metrics on hand-made decodes."""
import numpy as np
import pandas as pd
import pytest
import torch

from workflow.core.params import ParamsError
from workflow.lib import arith
from workflow.papers.hex import evaluate as E
from workflow.papers.hex import methods as M
from workflow.papers.hex import plan

torch.set_num_threads(1)

DECODE = {"steps": 16, "one_block": ["margin", "low_confidence", "random"], "fixed_blocks": [1, 2],
          "arms": {"paper": {"blocks": [1, 2], "seeds": 2, "temperature": 0.9},
                   "small": {"blocks": [1], "seeds": 2, "temperature": 0.5}},
          "scaling_paths": [1, 2, 4], "scaling_draws": 3}


def test_the_vote_excludes_none_and_breaks_ties_by_order():
    assert E.vote([None, 3, 3, 5]) == (3, False)
    assert E.vote([5, 3, 3, 5]) == (5, True)  # the first-inserted mode: the smallest block's answer
    assert E.vote([None, None]) == (None, False)


def test_lowest_nll_pick_ignores_unanswered_paths():
    answers = np.array([[None, 1], [4, 2], [5, 1]], dtype=object)
    nll = np.array([[0.1, 0.9], [0.5, 0.2], [0.3, 0.8]])
    assert E.lowest_nll_accuracy(answers, nll, np.array([5, 2])) == 1.0


def test_rank_trend_of_a_flat_series_is_zero():
    assert E.rank_trend([1, 2, 3], [0.5, 0.5, 0.5]) == 0.0
    assert E.rank_trend([1, 2, 3], [0.1, 0.2, 0.3]) == pytest.approx(1.0)


def decodes(correct_of: dict, problems: int = 10, seed: int = 0) -> pd.DataFrame:
    """A decodes table: every decoder of DECODE, each right on the first `correct_of[decoder]` problems (default 0)
    and answering 0 otherwise (truth: 7)."""
    rows = []
    for spec in M.decoders(DECODE, sc_block=1):
        k = correct_of.get(spec["decoder"], 0)
        for i in range(problems):
            rows.append(spec | dict(problem=i, ops=2, answer=7 if i < k else 0, truth=7, correct=i < k,
                                    collapsed=False, nll=0.1, forwards=16, split="test", seed=seed))
    return pd.DataFrame(rows)


def test_a_vote_over_different_experts_beats_each_of_them_and_its_control_does_not():
    """Three paths each right on 6 of 10 problems, wrong answers all different: the vote is right wherever two paths
    are (8 problems) and on problem 3, where only the first path is right and wins the tie; not on problem 9, where
    the first path's wrong answer wins it. The single-path control is as good as its one path."""
    right = {"paper/b1/s0": [0, 1, 2, 3, 4, 5], "paper/b1/s1": [4, 5, 6, 7, 8, 9], "paper/b2/s0": [0, 1, 2, 6, 7, 8],
             "paper/b2/s1": []}
    t = decodes({"fixed/b1": 6, "fixed/b2": 5, "one/margin": 2})
    for name, ok in right.items():
        rows = t.decoder.eq(name)
        t.loc[rows, "correct"] = t.loc[rows, "problem"].isin(ok)
        wrong = rows & ~t.correct
        t.loc[rows, "answer"] = 7
        t.loc[wrong, "answer"] = t.loc[wrong, "problem"] % 5 + int(name[-1]) * 5 + int(name[-4]) * 10  # all different
    measured, _ = E.measure(t, DECODE)
    assert measured["info_hex_acc_paper"] == [pytest.approx(0.9)]
    assert measured["k2_hex_minus_best_fixed"] == [pytest.approx(0.3)]
    assert measured["k2_hex_over_margin"] == [pytest.approx(4.5)]
    assert measured["k1_best_fixed_minus_margin"] == [pytest.approx(0.4)]
    controls = {name: E.measure(c, DECODE)[0] for name, c in E.control_tables(t, DECODE).items()}
    assert controls["single_path_for_vote"]["info_hex_acc_paper"] == [pytest.approx(0.6)]
    assert controls["single_path_for_vote"]["k4_vote_minus_nll"] == [0.0]
    assert controls["one_block_for_semi_ar"]["k1_best_fixed_minus_margin"] == [pytest.approx(-0.2)]


def test_every_decoder_is_named_once_and_paths_come_smallest_block_first():
    names = [d["decoder"] for d in M.decoders(DECODE, sc_block=2)]
    assert len(names) == len(set(names))
    assert [n for n in names if n.startswith("paper/")] == ["paper/b1/s0", "paper/b1/s1", "paper/b2/s0", "paper/b2/s1"]
    assert sum(n.startswith("sc_paper/") for n in names) == plan.paths_of(DECODE["arms"]["paper"])
    assert [d["decoder"] for d in M.decoders(DECODE, None)] == ["one/margin", "one/low_confidence", "one/random",
                                                               "fixed/b1", "fixed/b2"]


def test_a_decoding_job_runs_every_decoder_with_a_tiny_model():
    torch.manual_seed(0)
    vocab = arith.vocab()
    model = M.build({"d": 16, "layers": 1, "heads": 2, "shift": False}, len(vocab)).eval()
    problems = arith.problems(0, 4)
    rows, curve = M.run(model, problems, M.decoders(DECODE, None)[0], 16, 0, vocab)
    assert len(rows) == 4 and {r["truth"] for r in rows} <= set(range(10))
    assert curve[-1]["step"] == 16 and 0 <= curve[-1]["eos_fraction"] <= 1
    again, _ = M.run(model, problems, dict(M.decoders(DECODE, 1)[-1]), 16, 0, vocab)  # a sampled path is seeded
    assert again == M.run(model, problems, dict(M.decoders(DECODE, 1)[-1]), 16, 0, vocab)[0]


def test_the_mdm_initialised_from_an_arm_is_seeded_and_starts_from_the_arms_weights():
    """arm_init: the same seed gives the same model; with a zero MDM learning rate the MDM is exactly the ARM trained
    first (its weights, Dream's shift on), and without arm_init it is not."""
    p = {"min_ops": 2, "max_ops": 3, "stream_max_ops": 3, "batch": 4, "lr": 1e-3, "weight_decay": 0.0, "warmup": 1, "curve_every": 1,
         "steps": 2, "arm_init": {"steps": 2, "lr": 1e-2}}
    vocab = arith.vocab()

    def trained(q, shift=True):
        torch.manual_seed(5)
        model = M.build({"d": 16, "layers": 1, "heads": 2, "shift": shift}, len(vocab))
        arm_points = []
        M.train(model, q, 0, set(), lambda s, v: None, lambda s, v: arm_points.append(s))
        return model, arm_points

    a, points = trained(p)
    b, _ = trained(p)
    assert points == [1, 2] and a.config.shift
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    frozen, _ = trained(p | {"lr": 1e-12})  # the MDM phase leaves the ARM's weights as they are
    scratch, none = trained(p | {"lr": 1e-12, "arm_init": {"steps": 0, "lr": 1e-2}})
    assert none == [] and not torch.equal(frozen.head.weight, scratch.head.weight)
    torch.manual_seed(0)
    from workflow.lib.tinylm import Config, TinyLM
    untrained = TinyLM(Config(vocab=len(vocab), d=16, layers=1, heads=2, causal=True))
    assert not torch.allclose(frozen.head.weight, untrained.head.weight)  # the ARM phase trained it


def test_params_the_schema_cannot_check_are_rejected():
    ok = {"data": {"min_ops": 2, "max_ops": 5}, "decode": DECODE}
    plan.check(ok)
    with pytest.raises(ParamsError, match="min_ops 5 > max_ops 2"):
        plan.check(ok | {"data": {"min_ops": 5, "max_ops": 2}})
    with pytest.raises(ParamsError, match="must include margin"):
        plan.check(ok | {"decode": DECODE | {"one_block": ["random"]}})
    with pytest.raises(ParamsError, match=r"scaling_paths \[8\] exceed the paper arm's 4 paths"):
        plan.check(ok | {"decode": DECODE | {"scaling_paths": [1, 8]}})


def test_the_aa_nulls_put_another_seeds_comparator_in_the_methods_place():
    """Two seeds: each A/A null is the comparator of the other seed in the method's place; one seed gives no value."""
    t = pd.concat([decodes({"fixed/b1": 6, "fixed/b2": 5, "one/margin": 2, "paper/b1/s0": 4}, seed=0),
                   decodes({"fixed/b1": 3, "fixed/b2": 8, "one/margin": 5, "paper/b1/s0": 7}, seed=1)],
                  ignore_index=True)
    measured, _ = E.measure(t, DECODE)
    assert measured["info_nll_pick_acc_paper"] == [pytest.approx(0.4), pytest.approx(0.7)]
    aa = E.aa_nulls(t, DECODE, measured)
    assert aa["aa_margin"]["k1_best_fixed_minus_margin"] == pytest.approx([0.3, -0.3])  # margin(other) - margin
    assert aa["aa_best_fixed"]["k2_hex_minus_best_fixed"] == pytest.approx([0.2, -0.2])  # best(other) - best
    assert aa["aa_best_fixed"]["k2_hex_over_margin"] == pytest.approx([4.0, 1.2])
    assert aa["aa_nll_pick"]["k4_vote_minus_nll"] == pytest.approx([0.3, -0.3])
    one = t[t.seed.eq(0)]
    assert np.isnan(E.aa_nulls(one, DECODE, E.measure(one, DECODE)[0])["aa_margin"]["k1_best_fixed_minus_margin"]).all()


def test_the_k4_placebo_picks_an_answered_path_at_random():
    answers = np.array([[None, 1], [4, 2], [5, 1]], dtype=object)
    picks = [E.random_pick_accuracy(answers, np.array([5, 2]), np.random.default_rng(s)) for s in range(40)]
    assert set(picks) <= {0.0, 0.5, 1.0} and 0.0 < np.mean(picks) < 1.0  # never the unanswered path, not always right
    assert E.random_pick_accuracy(np.array([[None], [None]], dtype=object), np.array([3]), np.random.default_rng(0)) == 0.0
    t = decodes({"fixed/b1": 6, "fixed/b2": 5, "one/margin": 2, "paper/b1/s0": 4, "paper/b1/s1": 4, "paper/b2/s0": 4,
                 "paper/b2/s1": 4})  # every path right on the same 4 problems: any pick is as right as the vote
    measured, _ = E.measure(t, DECODE)
    assert E.placebos(t, DECODE) == {"placebo_random_pick": {"k4_vote_minus_nll": [pytest.approx(0.0)]}}
    assert measured["k4_vote_minus_nll"] == [pytest.approx(0.0)]


def test_the_long_split_holds_longer_chains_disjoint_from_the_others():
    from workflow.papers.hex.data import problem_sets

    sets = problem_sets({"test_seed": 1, "test": 20, "validation_seed": 2, "validation": 10, "min_ops": 2,
                         "max_ops": 5, "long_seed": 3, "long": 10, "long_ops": 6})
    assert {arith.operations(p) for p, _ in sets["long"]} == {6}
    assert max(arith.operations(p) for p, _ in sets["test"] + sets["validation"]) <= 5
    prompts = [p for split in sets.values() for p, _ in split]
    assert len(prompts) == len(set(prompts)) == 40


def test_long_metrics_are_measured_on_the_long_split_alone():
    """The same decoders, right on 6 of 10 test problems and on 2 of 10 long ones: the `long_` metrics read the
    long split only, the others the test split only."""
    t = pd.concat([decodes({"fixed/b1": 6, "one/margin": 3}), decodes({"fixed/b1": 2, "one/margin": 1}).assign(split="long")],
                  ignore_index=True)
    measured, _ = E.measure(t, DECODE)
    assert measured["k0_best_fixed_acc"] == [pytest.approx(0.6)] and measured["long_k0_best_fixed_acc"] == [pytest.approx(0.2)]
    assert measured["long_k1_best_fixed_minus_margin"] == [pytest.approx(0.1)]
    assert set(E.placebos(t, DECODE)["placebo_random_pick"]) == {"k4_vote_minus_nll", "long_k4_vote_minus_nll"}
