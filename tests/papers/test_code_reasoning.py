"""Tests for ``code_reasoning`` (workflow/papers/code_reasoning): the program world against its reference
interpreter and Python itself, what each rendering keeps and destroys, the disjoint sets, and the claims' metrics
and controls on hand-made scores."""
import math
import re

import numpy as np
import pandas as pd
import pytest

from workflow.core.params import ParamsError
from workflow.papers.code_reasoning import evaluate as V
from workflow.papers.code_reasoning import plan, sets as S, world as W


@pytest.fixture(scope="module")
def programs():
    rng = np.random.default_rng(0)
    return [W.draw_program(rng) for _ in range(300)]


def test_every_python_rendering_runs_to_the_reference_answer(programs):
    assert all(W.py_executes(p) for p in programs)
    assert len({W.run(p) for p in programs}) == 10  # every digit occurs


def test_programs_have_the_asked_number_of_statements():
    rng = np.random.default_rng(2)
    assert {len(W.draw_program(rng, (2, 3))["stmts"]) for _ in range(200)} == {2, 3}
    assert {len(W.draw_program(rng, (3, 3))["stmts"]) for _ in range(50)} == {3}


def test_variables_are_written_before_they_are_read(programs):
    for p in programs:
        written = set()
        for s in p["stmts"]:
            reads = {"set": lambda: [], "addc": lambda: [s[2]], "add": lambda: list(s[2:4]),
                     "ifelse": lambda: [s[1], s[3]], "repeat": lambda: [s[2]]}[s[0]]()
            assert set(reads) <= written, p
            written.add(W.assigned(s))
        assert p["target"] == W.assigned(p["stmts"][-1])


def test_every_variant_ends_with_the_answer_and_the_perturbations_do_what_they_say(programs):
    rng = np.random.default_rng(1)
    p, other = programs[3], programs[4]
    for v in W.VARIANTS:
        assert W.render(p, v, rng, other).endswith(f"\n{W.worked(p)}\nANSWER: {W.run(p)}")
        assert W.render(p, v, rng, other, shows_work=False).endswith(f"\nANSWER: {W.run(p)}")
    py = W.rendering(p, "py", rng)
    assert not re.search(r"\s", W.rendering(p, "py_nows", rng))
    assert "#" not in W.rendering(p, "py_nocomm", rng) and "#" in py
    assert not re.search(r"\b[abcd]\b", W.rendering(p, "py_varren", rng)) and "var_0" in W.rendering(p, "py_varren", rng)
    kw = W.rendering(p, "py_kwrand", rng).split("\n")
    assert not any(re.search(r"\b(if|else|for|print)\b|=", line.split("  # ")[0]) for line in kw)
    fictional = W.rendering(p, "fictional", rng)
    assert fictional == W.rendering(p, "fictional", np.random.default_rng(9))  # a fixed bijection, no randomness
    back = {v: k for k, v in W.FICTIONAL.items()}
    assert re.sub("|".join(re.escape(t) for t in sorted(back, key=len, reverse=True)), lambda m: back[m.group()],
                  fictional) == py  # invertible: the skeleton is kept
    assert W.rendering(p, "py_mismatch", rng, other) == W.rendering(other, "py", rng)


def test_the_worked_steps_of_a_known_program():
    p = {"vars": ["a", "b"], "target": "b", "stmts": [("set", "a", 7), ("addc", "b", "a", "-", 9),
                                                      ("ifelse", "b", 6, "b", "+", 3), ("repeat", 2, "a", 5),
                                                      ("add", "b", "a", "b")]}
    assert W.worked(p) == "a=7 b=a-9=7-9=8 b>6=8>6=yes b=b+3=8+3=1 a=a+5=7+5=2 a=a+5=2+5=7 b=a+b=7+1=8"
    assert W.run(p) == 8 and W.solution(p, True) == f"{W.worked(p)}\nANSWER: 8" and W.solution(p, False) == "ANSWER: 8"


def test_every_worked_step_is_one_right_operation_and_ends_on_the_answer(programs):
    for p in programs:
        steps = W.worked(p).split()
        assert steps[-1].rsplit("=", 1)[1] == str(W.run(p))
        for step in steps:
            parts = step.split("=")
            if len(parts) == 4:  # x=expr=digits=value
                assert eval(parts[2]) % 10 == int(parts[3]), step  # noqa: S307 (our own digits)
            elif len(parts) == 3:  # a condition: c>k=digits>k=yes|no
                assert (eval(parts[1]) and "yes" or "no") == parts[2], step  # noqa: S307


def test_misleading_comments_change_numbers_or_directions():
    rng = np.random.default_rng(0)
    assert W.misleading("add 4", rng).startswith("subtract ") and W.misleading("add 4", rng) != "subtract 4"
    assert W.misleading("set a", rng) == "set a"


def test_sets_are_disjoint_and_fit_the_context():
    data = S.build({"data_seed": 3, "statements": [3, 4], "worked_steps": True, "test_items": 40, "priming_items": 30,
                    "train_programs": 60, "val_items": 25, "val_seed": 4})
    train = {W.key(p) for p in data["train"]}
    assert len(train) == 60 and all(S.fits(p, True) for p in data["train"])
    # the priming set shows the work of every program's answer, the NL questions answer alone
    primed = S.every_item(data["priming"])
    assert all(re.search(r"=\d+\nANSWER: \d$", r) for task in ("math", "code") for _, r in data["priming"][task])
    assert all(re.fullmatch(r"ANSWER: \w+", r) for _, r in data["priming"]["nl"])
    test_prompts = {q for task in S.TASKS for q, _ in data["test"][task]}
    assert not test_prompts & {q for q, _ in primed}
    assert not {W.math_item(p) for p in data["train"]} & test_prompts
    # the validation split: the gate's tasks only, its programs in no other set
    val_prompts = {q for task in S.GATED_TASKS for q, _ in data["validation"][task]}
    assert sorted(data["validation"]) == sorted(S.GATED_TASKS) and all(len(v) == 25 for v in data["validation"].values())
    assert not val_prompts & (test_prompts | {q for q, _ in primed} | {W.code_item(p) for p in data["train"]}
                              | {W.math_item(p) for p in data["train"]})
    assert [len(data["priming"][t]) for t in S.TASKS] == [30, 30, 30] and all(len(v) == 40 for v in data["test"].values())
    rho = S.density(data["train"])
    assert rho["py"] == 1.0 and rho["compressed"] < 0.5 < rho["py_nows"] < 1 < rho["py_varren"]


def test_a_base_batch_takes_each_source_in_its_share():
    from workflow.papers.code_reasoning import methods as M

    priming = {task: [(f"{task} {i}", "ANSWER: 1") for i in range(50)] for task in S.TASKS}
    text = "Emma Woodhouse, handsome, clever, and rich " * 20
    draw = M.base_batches(text, priming, {"batch": 32, "prose": 0.125, "nl": 0.25, "drill": 0.0625},
                          np.random.default_rng(0))
    batches = [draw() for _ in range(50)]
    sources = [["drill" if q == M.DRILL_PROMPT else q.split(" ")[0] if q.split(" ")[0] in S.TASKS else "prose"
                for q, _ in b] for b in batches]
    assert all(b.count("prose") == 4 and b.count("nl") == 8 and b.count("drill") == 2
               and b.count("math") + b.count("code") == 18 for b in sources)
    programs = [s for b in sources for s in b if s in ("math", "code")]
    assert 0.4 < programs.count("math") / len(programs) < 0.6  # math and code alike
    # the drill: ten operations of the table a row, each result right, both operators drawn
    facts = [f for b in batches for q, r in b if q == M.DRILL_PROMPT for f in r.split(" ")]
    assert len(facts) == 50 * 2 * 10 and {f[1] for f in facts} == {"+", "-"}
    assert all((int(f[0]) + (int(f[2]) if f[1] == "+" else -int(f[2]))) % 10 == int(f[4]) for f in facts)


def test_the_base_drills_the_table_first_then_draws_base_batches(monkeypatch):
    from workflow.papers.code_reasoning import methods as M

    priming = {task: [(f"{task} {i}", "ANSWER: 1") for i in range(50)] for task in S.TASKS}
    text = "Emma Woodhouse, handsome, clever, and rich " * 20
    p = {"batch": 8, "prose": 0.25, "nl": 0.25, "drill": 0.0, "drill_until": 0.99, "drill_steps": 3}
    seen = []
    monkeypatch.setattr(M, "encode", lambda vocab, pairs: seen.append(pairs) or (None, None))
    monkeypatch.setattr(M, "next_token_loss", lambda *args: None)
    monkeypatch.setattr(M, "schedule", lambda p: None)
    monkeypatch.setattr(M, "fit", lambda model, batch_loss, schedule, curve: [batch_loss() for _ in range(6)])
    M.pretrain(None, M.vocab(), text, priming, p, 0, None)
    assert [all(q == M.DRILL_PROMPT for q, _ in b) for b in seen] == [True] * 3 + [False] * 3
    # after the drill, the batches a base without it draws (the drill has a generator of its own)
    draw = M.base_batches(text, priming, p, np.random.default_rng(0))
    assert seen[3:] == [draw() for _ in range(3)]


def scores(acc: dict[str, tuple[float, float]], seeds=(0, 1, 2)) -> pd.DataFrame:
    """variant -> (math, code) accuracy, the same in every seed; nl task 0.5."""
    return pd.DataFrame([{"variant": v, "seed": s, "task": t, "accuracy": a}
                         for v, (m, c) in acc.items() for s in seeds for t, a in (("math", m), ("code", c), ("nl", 0.5))])


def test_the_metrics_and_controls_on_hand_made_scores():
    acc = {"zeroshot": (0.2, 0.3), "nl": (0.5, 0.5), "py": (0.6, 0.7), "py_nows": (0.4, 0.5), "py_kwrand": (0.3, 0.4),
           "py_varren": (0.6, 0.6), "py_nocomm": (0.6, 0.7), "py_commswap": (0.5, 0.7), "py_commmislead": (0.6, 0.6),
           "fictional": (0.6, 0.5), "pseudo": (0.58, 0.6), "flowchart": (0.5, 0.6), "nlsteps": (0.5, 0.5),
           "compressed": (0.65, 0.6), "py_mismatch": (0.1, 0.1)}
    m = V.measure(scores(acc))
    assert m["k0_code_py"] == [0.7] * 3 and m["k1_math_py_minus_zeroshot"] == pytest.approx([0.4] * 3)
    structural, semantic = (0.2 + 0.3) / 2, (0.05 + 0.0 + 0.05) / 3
    assert m["k2_structural_minus_semantic_drop"] == pytest.approx([structural - semantic] * 3)
    assert m["k3_flowchart_minus_py_math"] == pytest.approx([-0.1] * 3)
    assert m["k4_compressed_over_py"] == pytest.approx([0.625 / 0.65] * 3)
    assert m["k5_regular_minus_kwrand"] == pytest.approx([0.55 - 0.35] * 3)
    controls = {name: V.measure(t) for name, t in V.control_tables(scores(acc)).items()}
    assert controls["mismatched_code"]["k0_code_py"] == [0.1] * 3  # py_mismatch in py's place
    assert controls["structure_intact"]["k2_structural_minus_semantic_drop"] == pytest.approx([-semantic] * 3)


def test_plan_check_names_an_unknown_variant_and_a_bad_head_size():
    good = {"plan": {"variants": ["py", "nl"]}, "model": {"d": 48, "heads": 4}, "data": {"statements": [2, 3]}}
    plan.check(good)
    with pytest.raises(ParamsError, match="unknown \\['java'\\]"):
        plan.check(good | {"plan": {"variants": ["py", "java"]}})
    with pytest.raises(ParamsError, match="rotary"):
        plan.check(good | {"model": {"d": 36, "heads": 4}})
    with pytest.raises(ParamsError, match="fewest, most"):
        plan.check(good | {"data": {"statements": [4, 3]}})


def test_the_aa_nulls_put_another_seeds_comparator_in_place():
    """Seeds differ only in nl's and the semantic variants' scores: each A/A null meets the other seed's comparator;
    one seed gives no value."""
    acc = {"zeroshot": (0.2, 0.3), "nl": (0.5, 0.5), "py": (0.6, 0.7), "py_nows": (0.4, 0.5), "py_kwrand": (0.3, 0.4),
           "py_varren": (0.6, 0.6), "py_nocomm": (0.6, 0.7), "py_commswap": (0.5, 0.7), "py_commmislead": (0.6, 0.6),
           "fictional": (0.6, 0.5), "pseudo": (0.58, 0.6), "flowchart": (0.5, 0.6), "compressed": (0.65, 0.6),
           "py_mismatch": (0.1, 0.1)}
    other = acc | {"nl": (0.4, 0.3), "py": (0.5, 0.5), "py_varren": (0.3, 0.3), "py_nocomm": (0.3, 0.3),
                   "py_commswap": (0.3, 0.3)}
    t = pd.concat([scores(acc, seeds=(0,)), scores(other, seeds=(1,))], ignore_index=True)
    aa = V.aa_nulls(t, V.measure(t))
    assert aa["aa_nl"]["k1_math_py_minus_nl"] == pytest.approx([0.4 - 0.5, 0.5 - 0.4])
    assert aa["aa_py"]["k3_pseudo_minus_py_math"] == pytest.approx([0.5 - 0.6, 0.6 - 0.5])
    assert aa["aa_py"]["k4_compressed_over_py"] == pytest.approx([0.5 / 0.65, 0.65 / 0.5])
    semantic = [(0.6 + 0.65 + 0.6) / 3, 0.3]  # the semantic variants' mean of each seed (mean of math and code)
    drop = [semantic[0] - semantic[1], semantic[1] - semantic[0]]  # another seed's semantic drop minus this seed's
    assert aa["aa_semantic"]["k2_structural_minus_semantic_drop"] == pytest.approx(drop)
    one = V.aa_nulls(scores(acc, seeds=(0,)), V.measure(scores(acc, seeds=(0,))))
    assert math.isnan(one["aa_py"]["k4_compressed_over_py"][0])


def test_the_placebos_make_only_the_credited_ingredient_inert(programs):
    rng = np.random.default_rng(1)
    p, other = programs[3], programs[4]
    for placebo, rendering in W.MISMATCHED.items():  # the credited rendering of another program, this one's answer
        assert W.rendering(p, placebo, rng, other) == W.rendering(other, rendering, rng)
        assert W.render(p, placebo, rng, other).endswith("\n" + W.solution(p, True))
    acc = {"zeroshot": (0.2, 0.3), "nl": (0.5, 0.5), "py": (0.6, 0.7), "py_nows": (0.4, 0.5), "py_kwrand": (0.3, 0.4),
           "py_varren": (0.6, 0.6), "py_nocomm": (0.6, 0.7), "py_commswap": (0.5, 0.7), "py_commmislead": (0.6, 0.6),
           "fictional": (0.6, 0.5), "pseudo": (0.58, 0.6), "flowchart": (0.5, 0.6), "compressed": (0.65, 0.6),
           "py_mismatch": (0.1, 0.1), "pseudo_mismatch": (0.2, 0.1), "flowchart_mismatch": (0.1, 0.2),
           "compressed_mismatch": (0.3, 0.3)}
    t = scores(acc)
    own, pl = V.measure(t), V.placebos(t)
    assert own == V.measure(t) and own["k3_pseudo_minus_py_math"] == pytest.approx([-0.02] * 3)
    assert pl["placebo_mismatched_abstractions"]["k3_pseudo_minus_py_math"] == pytest.approx([-0.4] * 3)
    assert pl["placebo_mismatched_abstractions"]["k3_flowchart_minus_py_math"] == pytest.approx([-0.5] * 3)
    assert pl["placebo_mismatched_compressed"]["k4_compressed_over_py"] == pytest.approx([0.3 / 0.65] * 3)
    # K2: another pair of perturbations called structural in each seed, never the true one; as many of each
    for seed in range(20):
        rename = V.shuffled_structure(np.random.default_rng(seed))
        assert sorted(rename) == sorted(rename.values()) == sorted(V.STRUCTURAL + V.SEMANTIC)
        assert {v for v, role in rename.items() if role in V.STRUCTURAL} != set(V.STRUCTURAL)
    assert len(pl["placebo_shuffled_structure"]["k2_structural_minus_semantic_drop"]) == 3
    assert pl["placebo_shuffled_structure"]["k2_structural_minus_semantic_drop"] != own["k2_structural_minus_semantic_drop"]
    # K5: random keywords trade roles with one regular rendering
    swapped = V.shuffled_regularity(np.random.default_rng(0))
    assert len(swapped) == 2 and swapped[V.IRREGULAR] in V.REGULAR and swapped[swapped[V.IRREGULAR]] == V.IRREGULAR
    k5 = pl["placebo_shuffled_regularity"]["k5_regular_minus_kwrand"]
    assert all(v == pytest.approx(0.35 - 0.6) or v == pytest.approx(0.35 - 0.55) for v in k5)
