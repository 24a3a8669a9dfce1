"""Tests for the ``lnsp`` core algorithms (workflow/papers/lnsp): languages, NSP labels, L*_nsp, aalpy baselines,
the PAC NSP equivalence oracle and a tiny Transformer teacher. One torch thread, a few seconds in all."""

import numpy as np
import pytest
import torch

from workflow.papers.lnsp import methods as M
from workflow.papers.lnsp import teachers as T
from workflow.papers.lnsp import transformer as TF
from workflow.papers.lnsp.languages import DFA

torch.set_num_threads(1)


# ------------------------------------------------------------------------------------------ languages
@pytest.mark.parametrize("name", sorted(M.EXPECTED_STATES))
def test_language_sizes_are_minimal_and_match_aalpy(name):
    d = M.get_language(name)
    assert d.n_states == M.EXPECTED_STATES[name]
    assert d.minimize().n_states == d.n_states
    a = d.to_aalpy()
    a.minimize()
    assert len(a.states) == d.n_states


@pytest.mark.parametrize("name,pos,neg", [
    ("tomita1", ["", "1", "111"], ["0", "10", "110"]),
    ("tomita2", ["", "10", "1010"], ["1", "01", "100", "1011"]),
    ("tomita3", ["", "1", "0", "11", "100", "110", "1100", "1001", "11000"], ["10", "101", "010", "1110", "1011", "111000",
                                                                               "10001", "111010"]),
    ("tomita4", ["", "00", "1001", "0100100"], ["000", "1000", "10001"]),
    ("tomita5", ["", "11", "00", "1001", "0101"], ["1", "0", "10", "111", "0001"]),
    ("tomita6", ["", "10", "01", "1100", "000111"], ["1", "0", "11", "100"]),
    ("tomita7", ["", "0", "1", "0101", "0011", "00110011"], ["10101", "010101", "1010"]),
    ("parity", ["", "0", "11", "0101", "1001"], ["1", "10", "111", "0100"]),
    ("dyck2_2", ["", "()", "[()]", "([])[]"], [")(", "(]", "((()))", "(", "[[[]]]"]),
    ("dyck4_3", ["<{[]}>", "([{}])<>"], ["([{<>}])", "<]"]),
])
def test_language_membership_known_words(name, pos, neg):
    d = M.get_language(name)
    assert all(d.accepts(w) for w in pos)
    assert not any(d.accepts(w) for w in neg)


def test_nsp_labels_hand_checked():
    # Tomita 2 = (10)*, word "101": prefixes "", "1", "10", "101"
    mem, cont = M.nsp_labels(M.get_language("tomita2"), "101")
    assert mem.tolist() == [True, False, True, False]
    # continuation bits over ("0", "1"): after "" only "1" live; after "1" only "0"; after "10" only "1"; ...
    assert cont.tolist() == [[False, True], [True, False], [False, True], [True, False]]
    # Dyck-(2,2) word "(": member 0, continuation: "(" live (depth 2 ok), ")" live, "[" live, "]" dead
    mem, cont = M.nsp_labels(M.get_language("dyck2_2"), "((")
    assert mem.tolist() == [True, False, False]
    assert cont[1].tolist() == [True, True, True, False]          # ( ) [ ] after "("
    assert cont[2].tolist() == [False, True, False, False]        # depth 2 = m: only ")" is live
    ex = M.nsp_example(M.get_language("tomita2"), "10")
    assert ex == {"word": "10", "member": "101", "cont": ["01", "10", "01"]}


def test_samplers_positive_deterministic_and_capped():
    d = M.get_language("dyck3_3")
    a = M.make_corpus("dyck3_3", 300, seed=5)
    assert a == M.make_corpus("dyck3_3", 300, seed=5) and a != M.make_corpus("dyck3_3", 300, seed=6)
    assert all(d.accepts(w) and len(w) <= 24 for w in a)
    u = M.sample_untruncated(d, 400, np.random.default_rng(0), noise=0.05, **M.LANGUAGES["dyck3_3"]["sampler"])
    frac_neg = np.mean([not d.accepts(w) for w in u])
    assert 0.02 < frac_neg < 0.6


def test_equivalence_and_difference_words():
    t4, t7 = M.get_language("tomita4"), M.get_language("tomita7")
    assert M.equivalent(t4, t4.minimize()) and not M.equivalent(t4, t7)
    w = M.distinguishing_word(t4, t7)
    assert t4.accepts(w) != t7.accepts(w)
    diff = M.difference_words(t4, t7, k=10)
    assert len(diff) == 10 and all(t4.accepts(x) != t7.accepts(x) for x in diff)
    assert [len(x) for x in diff] == sorted(len(x) for x in diff) and diff[0] == w
    assert M.difference_words(t4, t4.minimize(), k=5) == []


def test_dfa_roundtrips():
    d = M.get_language("dyck2_2")
    assert M.equivalent(DFA.from_dict(d.to_dict()), d)
    assert M.equivalent(DFA.from_aalpy(d.to_aalpy(), d.alphabet), d)


# --------------------------------------------------------------------------------------------- L*_nsp
@pytest.mark.parametrize("name", M.TOMITA)
def test_lstar_nsp_exact_teacher_recovers_tomita(name):
    target = M.get_language(name)
    res = M.run_exact(name, seed=0)
    learned = DFA.from_dict(res["dfa"])
    assert res["converged"] and res["equivalent"] and res["same_size"]
    # identical minimal DFA (canonical numbering), not only the same language
    assert np.array_equal(learned.minimize().delta, target.minimize().delta)
    assert np.array_equal(learned.minimize().accept, target.minimize().accept)
    assert res["samples_to_last_cex"] <= 10 and res["n_mq"] < 100


@pytest.mark.parametrize("name", ["parity", "dyck2_2", "dyck2_3"])
def test_lstar_nsp_exact_teacher_other_languages(name):
    res = M.run_exact(name, seed=1)
    assert res["converged"] and res["equivalent"] and res["n_states"] == M.EXPECTED_STATES[name]
    assert res["hyp_sizes"][-1] == res["n_states"] and res["rounds"] == len(res["hyp_sizes"])


def test_rivest_schapire_suffix_known_answer():
    """Tomita 2: the first closed table gives the 2-state hypothesis {empty word}; the counterexample "10" has
    alpha = (MQ("10"), MQ("0"+"0"), MQ("0")) = (1, 0, 0), so RS adds the suffix "0" (not "10")."""
    from workflow.papers.lnsp.lstar_nsp import _Table

    teacher = M.DFATeacher(M.get_language("tomita2"))
    tab = _Table(teacher)
    tab.fill([()])
    assert tab.close(100)
    hyp, access = tab.hypothesis()
    assert hyp.n_states == 2 and access == [(), ("0",)]
    assert hyp.accepts("") and not hyp.accepts("10")
    tab.add_cex(hyp, access, tuple("10"))
    assert tab.E == [(), ("0",)]
    tab.close(100)
    hyp2, _ = tab.hypothesis()
    assert hyp2.n_states == 3 and M.equivalent(hyp2, M.get_language("tomita2"))


def test_pac_sample_size():
    assert M.pac_sample_size(1, 0.01, 0.05) == 369  # ceil(100 (ln 20 + ln 2))
    assert M.pac_sample_size(2, 0.01, 0.05) == 439
    assert M.pac_sample_size(1, 0.1, 0.05) == 37


@pytest.mark.parametrize("name", ["tomita3", "tomita5", "dyck2_2"])
def test_aalpy_classic_lstar_and_lstar_nsp_agree(name):
    target = M.get_language(name)
    nsp = M.run_exact(name, seed=0)
    nsp_aalpy = M.run_exact(name, seed=0, backend="aalpy")
    teacher = M.DFATeacher(target, **M.LANGUAGES[name]["sampler"])
    classic = M.run_classic(teacher, name, seed=0)
    classic_aalpy = M.run_classic(teacher, name, seed=0, backend="aalpy")
    a, b, c, d = (DFA.from_dict(r["dfa"]) for r in (nsp, nsp_aalpy, classic, classic_aalpy))
    assert classic["converged"] and classic_aalpy["converged"]
    assert all(M.equivalent(x, target) for x in (a, b, c, d))
    assert a.n_states == b.n_states == c.n_states == d.n_states == target.n_states


def test_nsp_oracle_finds_counterexample_for_wrong_hypothesis():
    target = M.get_language("dyck2_2")
    teacher = M.DFATeacher(target, **M.LANGUAGES["dyck2_2"]["sampler"])
    # wrong hypotheses: Dyck-(2,1) (depth 1 only) and the 1-state "everything" automaton
    for wrong in (M.dyck(2, 1), DFA(target.alphabet, [[0, 0, 0, 0]], [True])):
        oracle = M.NSPEquivalenceOracle(teacher, eps=0.05, delta=0.05, rng=0)
        cex = oracle(wrong)
        assert cex is not None
        assert target.accepts(cex) != wrong.accepts(cex)  # a true membership counterexample (Lemma 5.1)
        assert oracle.samples_to_last_cex >= 1
    # the target itself passes: no counterexample in the whole round
    oracle = M.NSPEquivalenceOracle(teacher, eps=0.05, delta=0.05, rng=0)
    assert oracle(target) is None and oracle.n_samples == M.pac_sample_size(1, 0.05, 0.05)


def test_nsp_oracle_lemma_5_1_cases():
    """Each mismatch type yields its counterexample: membership, target-dead/hyp-live, target-live/hyp-dead."""
    target = M.get_language("tomita4")  # no "000"
    teacher = M.DFATeacher(target)
    rng = np.random.default_rng(0)
    A = target.alphabet
    # hypothesis "everything": accepts 000 -> 'dead' or 'member' counterexamples, all rejected by the target
    everything = DFA(A, [[0, 0]], [True])
    # hypothesis 1*: "0" dead in the hypothesis but live in the target -> 'live' counterexample via Gen
    ones = M.tomita(1)
    kinds = set()
    for hyp in (everything, ones):
        o = M.NSPEquivalenceOracle(teacher, eps=0.05, rng=rng)
        cex = o(hyp)
        assert cex is not None and target.accepts(cex) != hyp.accepts(cex)
        kinds.add(o.cex_kinds[-1])
    assert kinds == {"dead", "live"}


def test_binary_oracle_and_classic_budget():
    # with a too small round budget classic L* on Dyck-(3,3) does not converge
    name = "dyck3_3"
    teacher = M.DFATeacher(M.get_language(name), **M.LANGUAGES[name]["sampler"])
    classic = M.run_classic(teacher, name, seed=0, caps=M.budget(41, rounds=5))
    assert classic["rounds"] <= 5 and not classic["converged"] and not classic["equivalent"]
    assert 0.0 < classic["frac_negative"] < 1.0


@pytest.mark.parametrize("caps", [{"rounds": 3}, {"mq": 200}, {"states_factor": 1, "states_extra": -30}])
def test_every_budget_stops_both_learners_unconverged(caps):
    """Rounds, MQs and hypothesis states each end a run (converged false) for L*_nsp and classic L* alike."""
    name = "dyck3_3"
    limits = M.budget(41, **caps)
    nsp = M.run_exact(name, seed=0, caps=limits)
    classic = M.run_classic(M.exact_teacher(name), name, seed=0, caps=limits)
    for r in (nsp, classic):
        assert not r["converged"] and r["rounds"] <= limits["max_rounds"]
        assert r["n_mq"] <= limits["max_mq"] + 5_000  # checked before each EQ: one round may overshoot a little
    full = M.run_exact(name, seed=0)
    assert full["converged"] and full["equivalent"]


def test_budget_is_the_same_for_every_learner():
    assert M.budget(8) == {"max_rounds": 300, "max_states": 26, "max_mq": 500_000}
    p = {"eps": 0.02, "delta": 0.1, "backend": "own", "rounds": 7, "states_factor": 3, "states_extra": 1, "mq": 99}
    assert M.learner_settings("dyck2_2", p) == {"eps": 0.02, "delta": 0.1, "backend": "own",
                                                "caps": {"max_rounds": 7, "max_states": 25, "max_mq": 99}}


def test_shuffled_teacher_keeps_membership_and_permutes_continuation_bits():
    name = "dyck2_3"
    exact = M.exact_teacher(name)
    shuf = M.exact_teacher(name, "shuffled", seed=0)
    words = exact.sample(40, np.random.default_rng(1))
    moved = 0
    for (m1, c1), (m2, c2) in zip(exact.nsp_batch(words), shuf.nsp_batch(words)):
        assert np.array_equal(m1, m2) and c1.shape == c2.shape and c1.sum() == c2.sum()
        moved += int((c1 != c2).any())
    assert moved > 30  # the bits no longer sit at their (prefix, symbol)
    assert shuf.membership(words).all() and shuf.n_mq == len(set(words))
    assert shuf.generate(("(",), np.random.default_rng(0)) is not None and shuf.n_gen == 1


def test_perturbed_target_is_a_larger_nonempty_language():
    for name in M.SUITE:
        target = M.get_language(name)
        for seed in range(3):
            dfa, state = M.perturbed_target(name, seed)
            assert not target.accept[state] and dfa.accept[state] and not M.equivalent(dfa, target)
            assert dfa.accept.sum() == target.accept.sum() + 1
            M.exact_teacher(name, "perturbed", seed).sample(3, np.random.default_rng(0))  # positive words exist


def test_controls_c1_and_c5_are_caught_by_their_checks():
    """C1's control: L*_nsp follows the perturbed teacher, so the run is not the target. C5's control: on a
    perfect teacher no mined word of the perturbed target is a teacher error; on the perturbed teacher all are."""
    name = "tomita4"
    res = M.run_exact(name, seed=1, teacher=M.exact_teacher(name, "perturbed", 1))
    assert res["converged"] and not res["equivalent"]
    assert M.equivalent(DFA.from_dict(res["dfa"]), M.perturbed_target(name, 1)[0])
    right = M.mutant_mining(M.exact_teacher(name), name, seed=1, n_mined=8)
    assert not right["equivalent"] and right["mined"]["frac_confirmed"] == 0.0 and len(right["mined"]["words"]) == 8
    wrong = M.mutant_mining(M.exact_teacher(name, "perturbed", 1), name, seed=1, n_mined=8)
    assert wrong["mined"]["frac_confirmed"] == 1.0


def test_rpni_baseline_runs():
    name = "tomita4"
    teacher = M.DFATeacher(M.get_language(name))
    res = M.rpni_baseline(teacher, M.make_corpus(name, 200, seed=0))
    assert res["n_pos"] > 0 and res["n_neg"] > 0 and res["n_states"] >= 2


def test_mine_errors_confirms_teacher_errors():
    target = M.get_language("tomita4")
    wrong = M.get_language("tomita7")
    # a "teacher" whose language is tomita7: every difference word is a teacher error w.r.t. tomita4
    res = M.mine_errors(wrong, target, M.DFATeacher(wrong), k=8)
    assert len(res["words"]) == 8 and res["frac_confirmed"] == 1.0
    # a correct teacher: the extraction (tomita7) is wrong, none are teacher errors
    res = M.mine_errors(wrong, target, M.DFATeacher(target), k=8)
    assert res["frac_confirmed"] == 0.0


# ------------------------------------------------------------------------------------------ transformer
@pytest.fixture(scope="module")
def tiny_teacher():
    """Tomita-2 ((10)*) teacher: 1 layer, d 16, 120 steps -- seconds; (10)* is learnt almost at once."""
    words = M.make_corpus("tomita2", 400, seed=0)
    model, info = TF.train_transformer(words, ("0", "1"), n_layers=1, d_model=16, n_heads=2, max_len=40,
                                      pos="alibi", steps=120, batch_size=32, lr=3e-3, seed=0)
    return model, info


def test_train_teacher_deterministic():
    prof = dict(T.PROFILES["smoke"], n_train=100, n_train_large=100, d_model=16, n_heads=2)
    a, cfg, info = T.train_teacher("tomita4", seed=3, profile=prof, steps=15)
    b, _, _ = T.train_teacher("tomita4", seed=3, profile=prof, steps=15)
    c, _, _ = T.train_teacher("tomita4", seed=4, profile=prof, steps=15)
    assert all(torch.equal(a[k], b[k]) for k in a) and not all(torch.equal(a[k], c[k]) for k in a)
    assert cfg["alphabet"] == ["0", "1"] and info["steps"] == 15 and info["n_train"] == 100


def test_transformer_state_dict_roundtrip_and_determinism(tiny_teacher):
    model, info = tiny_teacher
    sd = model.state_dict()
    assert all(isinstance(v, torch.Tensor) for v in sd.values())
    again = TF.build_model(info["config"], sd)
    t1, t2 = TF.TransformerTeacher(model), TF.TransformerTeacher(again)
    words = ["", "10", "1010", "1", "0", "100"]
    assert t1.membership(words).tolist() == t2.membership(words).tolist()
    assert info["losses"][-1] < info["losses"][0]


def test_transformer_teacher_extraction_tomita2(tiny_teacher):
    model, _ = tiny_teacher
    teacher = TF.TransformerTeacher(model)
    assert teacher.membership(["", "10", "1010", "1", "0", "11"]).tolist() == [True, True, True, False, False, False]
    assert teacher.support("").tolist() == [False, True, True]  # "0" dead, "1" live, EOS in support
    met = M.teacher_metrics(teacher, "tomita2", n=200)
    assert met["heldout_string_acc"] == 1.0 and met["own_string_acc"] == 1.0
    res = M.extract(teacher, "tomita2", seed=0)
    assert res["equivalent"] and res["n_states"] == 3 and res["samples_to_last_cex"] <= 5
    assert res["mined"]["words"] == []


def test_evaluate_measure_on_hand_made_tables():
    """The evaluate step's measure(): gate, per-unit C1 flags, C5 on the weak teachers, on a hand-made table."""
    import pandas as pd

    from workflow.papers.lnsp.evaluate import measure

    exact = pd.DataFrame({
        "language": ["tomita3", "dyck2_2", "dyck2_2", "dyck3_3"], "family": ["tomita", "dyck", "dyck", "dyck"],
        "seed": [0, 0, 1, 0], "target_states": [5, 8, 8, 41], "nsp_n_states": [5, 8, 8, 40],
        "nsp_equivalent": ["True", "True", "True", "False"], "nsp_converged": [True, True, True, True],
        "nsp_samples_to_last_cex": [4, 3, 10, 30],
        "classic_samples_to_last_cex": [51, 17, 20, 100], "classic_converged": [True, True, True, False],
        "classic_equivalent": [True, True, True, False]})
    teachers = pd.DataFrame({
        "language": ["tomita3", "parity", "dyck2_2", "dyck2_3"], "family": ["tomita", "parity", "dyck", "dyck"],
        "variant": ["full", "full", "full", "weak"], "heldout_string_acc": [1.0, 0.8, 0.9995, 0.5],
        "gated": [True, False, True, False], "nsp_n_states": [5, 9, 8, 20], "nsp_target_states": [5, 2, 8, 16],
        "nsp_equivalent": [True, False, True, False], "nsp_samples_to_last_cex": [1, 50, 40, 7],
        "nsp_time_s": [0.3, 2.0, 1.0, 0.5], "mined_frac_confirmed": [float("nan"), 1.0, float("nan"), 0.95]})
    m = measure(exact, teachers)
    assert m["c1_exact"] == [1.0, 1.0, 1.0, 0.0]
    assert m["c2_equivalent"] == [1.0, 1.0] and m["c2_n_gated"] == [2.0]
    assert m["c2_tomita_samples"] == [1.0] and m["c2_dyck_samples"] == [40.0] and m["c2_tomita_seconds"] == [0.3]
    assert m["c3_state_excess"] == [0.0, 0.0] and m["info_c6_ungated_state_excess"] == [7.0]
    # Dyck runs: 17 >= 3*3 (win); 20 < 3*10 (loss); L*_nsp settled on a wrong 40-state DFA (loss)
    assert m["c4_nsp_wins"] == [1.0, 0.0, 0.0] and m["c4_nsp_not_beaten"] == [1.0, 0.0, 0.0]
    assert m["c5_not_equivalent"] == [1.0] and m["c5_frac_confirmed"] == [0.95]
    # no gated teacher: the C2 metrics are there, empty (inconclusive), never missing
    none_gated = measure(exact, teachers.assign(gated=False))
    assert none_gated["c2_equivalent"] == [] and none_gated["c2_n_gated"] == [0.0]


@pytest.mark.parametrize("nsp, classic, expected", [
    # (converged, equivalent, samples) of L*_nsp and of classic L*
    ((True, True, 3), (True, True, 9), 1.0),      # 3x the samples: a win
    ((True, True, 3), (True, True, 8), 0.0),      # < 3x: a loss
    ((True, True, 0), (True, True, 0), 0.0),      # neither needed a sample: no advantage
    ((True, True, 3), (True, False, 4), 1.0),     # classic settled on a wrong DFA
    ((True, True, 3), (False, False, 900), None),  # classic ran out of budget: a tie, not a win
    ((False, False, 90), (True, True, 900), 0.0),  # L*_nsp ran out where classic reached the target
    ((False, False, 90), (False, False, 9), None),  # both ran out: a tie
    ((True, False, 3), (False, False, 9), 0.0),   # L*_nsp settled on a wrong DFA
])
def test_c4_outcome_rule(nsp, classic, expected):
    import pandas as pd

    from workflow.papers.lnsp.evaluate import c4_outcomes

    d = pd.DataFrame({"target_states": [8], "nsp_n_states": [8], "nsp_converged": [nsp[0]], "nsp_equivalent": [nsp[1]],
                      "nsp_samples_to_last_cex": [nsp[2]], "classic_converged": [classic[0]],
                      "classic_equivalent": [classic[1]], "classic_samples_to_last_cex": [classic[2]]})
    got = c4_outcomes(d).iloc[0]
    assert (np.isnan(got) if expected is None else got == expected)


def test_controls_are_measured_by_the_same_function_with_their_columns():
    import pandas as pd

    from workflow.papers.lnsp.evaluate import as_learner, control_measures

    exact = pd.DataFrame({"language": ["dyck2_2"], "family": ["dyck"], "seed": [0], "target_states": [8],
                          **{f"{p}_{k}": [v] for p in ("nsp", "shuf", "pert") for k, v in
                             (("n_states", 8), ("equivalent", p != "pert"), ("converged", True),
                              ("samples_to_last_cex", {"nsp": 3, "shuf": 40, "pert": 5}[p]))},
                          "classic_samples_to_last_cex": [60], "classic_converged": [True], "classic_equivalent": [True],
                          "classic_n_states": [8]})
    teachers = pd.DataFrame({"language": ["tomita4", "dyck2_3"], "family": ["tomita", "dyck"], "variant": ["full", "weak"],
                             "gated": [True, False], "nsp_n_states": [4, 30], "nsp_target_states": [4, 16],
                             "nsp_equivalent": [True, False], "nsp_converged": [True, False],
                             "nsp_samples_to_last_cex": [1, 9], "nsp_time_s": [0.5, 1.0],
                             "classic_n_states": [4, 20], "classic_equivalent": [True, False],
                             "classic_converged": [True, False], "classic_samples_to_last_cex": [52, 30],
                             "classic_time_s": [0.1, 2.0], "mined_frac_confirmed": [float("nan"), 1.0],
                             "mutant_equivalent": [False, False], "mutant_mined_frac_confirmed": [0.0, 0.1],
                             "shuf_n_states": [4, float("nan")], "shuf_equivalent": [True, float("nan")],
                             "shuf_converged": [True, float("nan")], "shuf_samples_to_last_cex": [7, float("nan")],
                             "shuf_time_s": [12.0, float("nan")]})
    c = control_measures(exact, teachers)
    assert c["placebo_continuation_bits"]["c2_tomita_samples"] == [7.0]  # C2's placebo: shuffled bits, gated only
    assert c["placebo_continuation_bits"]["c2_tomita_seconds"] == [12.0] and c["placebo_continuation_bits"]["c2_equivalent"] == [1.0]
    assert c["perturbed_teacher"]["c1_exact"] == [0.0]
    assert c["shuffled_bits"]["c4_nsp_wins"] == [0.0]  # 60 < 3 x 40
    assert c["binary_labels"]["c2_tomita_samples"] == [52.0] and c["binary_labels"]["c2_tomita_seconds"] == [0.1]
    assert c["mutant_mining"]["c5_frac_confirmed"] == [0.1] and c["mutant_mining"]["c5_not_equivalent"] == [1.0]
    assert c["aa_classic"]["c4_nsp_wins"] == [] and c["aa_classic"]["c4_nsp_not_beaten"] == []  # one seed: no partner
    with pytest.raises(KeyError):  # a control without its own column is an error, never L*_nsp's value
        as_learner(teachers.drop(columns="classic_time_s"), "classic", ("nsp_time_s",))


def test_the_aa_null_puts_classic_lstar_of_the_next_seed_in_nsps_place():
    """C4's A/A null: classic L* of seed s+1 (cyclically) stands in for L*_nsp on seed s and meets seed s's classic L*
    by the same rule; L*_nsp's own outcomes are untouched."""
    import pandas as pd

    from workflow.papers.lnsp.evaluate import aa_null, control_measures, measure

    samples = {0: (3, 10), 1: (3, 40)}  # (L*_nsp, classic) samples to the last counterexample, per seed
    exact = pd.DataFrame([{"language": "dyck2_2", "family": "dyck", "seed": s, "target_states": 8,
                           **{f"{p}_{k}": v for p in ("nsp", "shuf", "pert", "classic") for k, v in
                              (("n_states", 8), ("equivalent", True), ("converged", True))},
                           "nsp_samples_to_last_cex": n, "shuf_samples_to_last_cex": n, "pert_samples_to_last_cex": n,
                           "classic_samples_to_last_cex": c} for s, (n, c) in samples.items()])
    teachers = pd.DataFrame({"language": ["tomita4"], "family": ["tomita"], "variant": ["full"], "gated": [True],
                             "nsp_n_states": [4], "nsp_target_states": [4], "nsp_equivalent": [True],
                             "nsp_converged": [True], "nsp_samples_to_last_cex": [1], "nsp_time_s": [0.5],
                             "classic_n_states": [4], "classic_equivalent": [True], "classic_converged": [True],
                             "classic_samples_to_last_cex": [52], "classic_time_s": [0.1], "mined_frac_confirmed": [0.9],
                             "mutant_equivalent": [False], "mutant_mined_frac_confirmed": [0.0],
                             **{f"shuf_{k}": [v] for k, v in (("n_states", 4), ("equivalent", True), ("converged", True),
                                                              ("samples_to_last_cex", 2), ("time_s", 3.0))}})
    aa = aa_null(exact, "classic").sort_values("seed")
    assert aa.nsp_samples_to_last_cex.tolist() == [40, 10] and aa.classic_samples_to_last_cex.tolist() == [10, 40]
    assert measure(exact, teachers)["c4_nsp_wins"] == [1.0, 1.0]
    # seed 0: classic(1) 40 vs classic(0) 10 - no faster: a loss; seed 1: classic(0) 10 vs 40 >= 3 x 10: a "win"
    assert control_measures(exact, teachers)["aa_classic"]["c4_nsp_wins"] == [0.0, 1.0]


def test_plan_lists_every_run_once():
    """issue 11: the evaluate step finds its inputs through the plan, in the order the rule file lists them."""
    from workflow.papers.lnsp import plan
    p = {"seeds": [0, 2], "teachers": ["tomita2", "dyck2_2"], "weak_teachers": ["dyck2_3"],
         "variants": {"full": {"seeds": [0]}, "weak": {"seeds": [0, 1]}}}
    assert plan.exact_paths(p) == ["results/lnsp/exact/s0.csv", "results/lnsp/exact/s2.csv"]
    assert plan.teachers(p) == [("full", 0, "tomita2"), ("full", 0, "dyck2_2"), ("weak", 0, "dyck2_3"),
                                ("weak", 1, "dyck2_3")]
    # one extract job per seed, reading every teacher of it (both variants)
    assert plan.extract_paths(p) == ["results/lnsp/extract/s0.json", "results/lnsp/extract/s1.json"]
    assert plan.extract_teachers(p, 0) == [("full", "tomita2"), ("full", "dyck2_2"), ("weak", "dyck2_3")]
    assert plan.extract_inputs(p, 1) == ["results/lnsp/teachers/weak/s1/dyck2_3.pt",
                                         "results/lnsp/teachers/weak/s1/dyck2_3.json"]
    assert plan.extract_seeds(p | {"weak_teachers": []}) == [0]   # a variant without languages has no teachers


def test_run_classic_samples_from_the_teacher_it_gets():
    """Classic L*'s EQ samples: a Transformer teacher's own untruncated LM, a DFA teacher's noisy walk (duck-typed,
    so that methods.py needs no torch)."""
    assert hasattr(TF.TransformerTeacher, "sample_untruncated")
    assert not hasattr(M.DFATeacher, "sample_untruncated") and not hasattr(M.ShuffledNSPTeacher, "sample_untruncated")
