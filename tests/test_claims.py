"""Claim verdicts from seed statistics; claim kinds, controls and the checks on claims.yaml."""
import copy

import pytest

from workflow.core.claims import HEADLINE, ClaimsError, check_verdict, evaluate, problems, validate_papers


def chk(op=">=", thr=0.5, agg="mean", metric="m", **extra):
    return {"metric": metric, "op": op, "threshold": thr, "aggregate": agg, **extra}


def claim(cid="A", kind="sanity", checks=None, units=1, **extra):
    return {"id": cid, "kind": kind, "statement": "s", "paper_value": "p", "source": "src", "why": "w", "units": units,
            "checks": checks or [chk()], **extra}


def spec(*claims, controls=None):
    out = {"paper": {"slug": "x", "title": "X"}, "claims": list(claims)}
    return out | ({"controls": controls} if controls else {})


def test_clear_pass_and_fail():
    assert check_verdict(chk(), [0.9, 0.91, 0.89], "default", 3)["verdict"] == "pass"
    assert check_verdict(chk(), [0.1, 0.12, 0.11], "default", 3)["verdict"] == "fail"


def test_interval_straddling_threshold_is_inconclusive():
    out = check_verdict(chk(), [0.2, 0.9, 0.6], "default", 3)
    assert out["verdict"] == "inconclusive" and out["ci95"][0] < 0.5 < out["ci95"][1]
    # mean 0.5667, sd 0.35: t(0.975, n-1) * 0.35 / sqrt(n) < 0.0667 first at n = 110
    assert out["units_to_decide"] == 110


def test_missing_units_or_nan_is_inconclusive():
    assert check_verdict(chk(), [0.9], "default", 3)["verdict"] == "inconclusive"
    assert check_verdict(chk(), [0.9, float("nan")], "default", 1)["verdict"] == "inconclusive"
    assert check_verdict(chk(), [], "default", 1)["verdict"] == "inconclusive"


def test_exact_zero_spread_value_is_decided():
    assert check_verdict(chk("<=", 0.0), [0.0, 0.0, 0.0], "default", 3)["verdict"] == "pass"


def test_profile_thresholds_and_median():
    c = chk(thr={"default": 0.99, "smoke": 0.9}, agg="median")
    assert check_verdict(c, [0.95], "smoke", 1)["verdict"] == "pass"
    assert check_verdict(c, [0.95], "default", 1)["verdict"] == "fail"
    assert check_verdict(chk(agg="median"), [0.6, 0.6, 0.7, 0.9, 0.55], "default", 5)["value"] == 0.6


def test_all_aggregate_fails_on_one_counterexample():
    assert check_verdict(chk("<=", 0.0, "all"), [0.0, 0.0, 0.0], "default", 3)["verdict"] == "pass"
    out = check_verdict(chk("<=", 0.0, "all"), [0.0, 0.0, 1e-3], "default", 3)
    assert out["verdict"] == "fail" and out["value"] == 1e-3 and out["frac_pass"] == 2 / 3


# ---- the sign rule: a clear miss fails, a clear hit passes, even when the t-interval is wide ----

def test_a_broken_method_five_times_over_the_bound_fails_on_three_units():
    """Error bound 0.35; a broken method's errors 1.0-3.0 with a wide spread: the t-interval contains 0.35."""
    values = [1.0, 1.2, 3.0]
    out = check_verdict(chk("<=", 0.35), values, "default", 3)
    assert out["ci95"][0] < 0.35  # the old rule alone would read "inconclusive"
    assert out["verdict"] == "fail" and out["rule"] == "sign"


def test_every_unit_clearly_on_the_passing_side_passes():
    out = check_verdict(chk(">", 0.0), [0.01, 0.02, 0.4], "default", 3)
    assert out["ci95"][0] < 0.0 and out["verdict"] == "pass" and out["rule"] == "sign"


def test_two_units_are_too_few_for_the_sign_rule():
    out = check_verdict(chk("<=", 0.35), [1.0, 3.0], "default", 2)
    assert out["verdict"] == "inconclusive"


def test_a_unit_within_the_margin_leaves_the_decision_to_the_interval():
    # 0.501 is on the passing side but within 5 % of the threshold: not a clear margin
    out = check_verdict(chk(), [0.501, 0.9, 0.2 + 0.6], "default", 3)
    assert out.get("rule") != "sign"
    # float noise around a zero threshold never decides by sign
    assert check_verdict(chk(">", 0.0), [1e-12, 2e-12, 3e-12], "default", 3).get("rule") != "sign"


def test_a_stated_margin_is_used():
    values = [0.52, 0.55, 0.95]  # 0.52 is 0.02 above: clear for a 0.01 margin, not for a 0.05 one
    assert check_verdict(chk(margin=0.01), values, "default", 3)["rule"] == "sign"
    assert check_verdict(chk(margin=0.05), values, "default", 3).get("rule") != "sign"


def test_mixed_sides_fall_back_to_the_interval():
    out = check_verdict(chk(), [0.1, 0.9, 0.95], "default", 3)
    assert out["verdict"] == "inconclusive"


# ---- claims: kinds, units, controls, no silent misses ----

def test_claim_combines_checks_and_info_is_never_judged():
    s = spec(claim("A", checks=[chk(), chk(metric="n")]), claim("B", kind="info"))
    out = evaluate(s, {"m": [0.9], "n": [0.1]}, "default")
    assert [c["verdict"] for c in out["claims"]] == ["fail", "info"]
    assert out["summary"] == {"reproduction": {"pass": 0, "fail": 0, "inconclusive": 0},
                              "sanity": {"pass": 0, "fail": 1, "inconclusive": 0},
                              "headline": dict.fromkeys(HEADLINE, 0), "uncontrolled": 0, "passes_on_amendment": 0,
                              "info": 1}


def test_a_check_can_need_fewer_units_than_its_claim():
    """A pooled count (one number over all cells) is one unit, beside per-cell checks of the same claim."""
    s = spec(claim("A", units={"default": 3, "smoke": 1}, checks=[chk(), chk(metric="n", units=1)]))
    out = evaluate(s, {"m": [0.9, 0.8, 0.95], "n": [0.9]}, "default")
    assert [c["verdict"] for c in out["claims"][0]["checks"]] == ["pass", "pass"]
    del s["claims"][0]["checks"][1]["units"]
    assert evaluate(s, {"m": [0.9, 0.8, 0.95], "n": [0.9]}, "default")["claims"][0]["verdict"] == "inconclusive"


def repro(**extra):
    return claim("R", kind="reproduction", units=3, control="broken", **{"nulls": {"aa": "aa", "placebo": "placebo"}} | extra)


CONTROLS = {"broken": "the method with its mechanism removed", "aa": "the comparator in the method's place",
            "placebo": "the method with the credited ingredient shuffled"}
NULLS_FAIL = {"aa": {"m": [0.1, 0.2, 0.1]}, "placebo": {"m": [0.2, 0.1, 0.2]}}


def test_a_claim_whose_nulls_and_control_fail_is_controlled():
    out = evaluate(spec(repro(), controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": [0.1, 0.1, 0.1]}, **NULLS_FAIL})
    c = out["claims"][0]
    assert c["verdict"] == "pass" and c["control"]["verdict"] == "fail" and not c["uncontrolled"]
    assert [c["nulls"][r]["verdict"] for r in ("aa", "placebo")] == ["fail", "fail"]
    assert out["summary"]["reproduction"]["pass"] == 1 and out["summary"]["uncontrolled"] == 0
    assert out["summary"]["headline"] == {"pass_controlled": 1, "pass_uncontrolled": 0, "fail": 0, "inconclusive": 0,
                                          "gated": 0}


def test_a_pass_without_declared_nulls_is_uncontrolled_and_counted_apart():
    c = claim("R", kind="reproduction", units=3, control="broken")  # a negative control alone is not the nearest null
    out = evaluate(spec(c, controls={"broken": CONTROLS["broken"]}), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": [0.1, 0.1, 0.1]}})
    assert out["claims"][0]["uncontrolled_why"] == "no A/A null or placebo declared"
    assert out["summary"]["headline"]["pass_uncontrolled"] == 1 and out["summary"]["headline"]["pass_controlled"] == 0


@pytest.mark.parametrize("role, why", [("aa", "the A/A null (the comparator in the method's place) passes"),
                                       ("placebo", "the placebo passes")])
def test_a_null_that_passes_makes_the_claim_uncontrolled(role, why):
    nulls = NULLS_FAIL | {role: {"m": [0.9, 0.9, 0.9]}}
    out = evaluate(spec(repro(), controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": [0.1, 0.1, 0.1]}, **nulls})
    assert out["claims"][0]["uncontrolled_why"] == why + " the same checks"


def test_a_null_that_cannot_be_built_says_why_and_the_claim_is_shown_so():
    c = repro(nulls={"aa": "aa", "placebo": {"none": "the claim credits the whole method: nothing smaller to remove"}})
    out = evaluate(spec(c, controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": [0.1, 0.1, 0.1]}, "aa": NULLS_FAIL["aa"]})
    row = out["claims"][0]
    assert row["nulls"]["placebo"] == {"none": "the claim credits the whole method: nothing smaller to remove"}
    assert row["uncontrolled"] and row["uncontrolled_why"].startswith("no placebo: the claim credits")


# The A/A null asks what every A/B test asks first. Planted here: for a claim of each comparative kind, the comparator
# itself in the method's place (per-unit values of the comparator, with independent seeds: other draws of its noise).
RNG_DRAWS = {"method_is_comparator": [0.801, 0.795, 0.812, 0.790, 0.806],   # the "method" = the comparator, seeds 0-4
             "comparator": [0.799, 0.808, 0.793, 0.803, 0.797],             # the comparator, seeds 5-9
             "comparator_again": [0.804, 0.792, 0.801, 0.809, 0.794]}       # the comparator, seeds 10-14


def gaps(a, b):
    return [x - y for x, y in zip(RNG_DRAWS[a], RNG_DRAWS[b])]


@pytest.mark.parametrize("check, expected", [
    (chk(op=">", thr=0.0, metric="gap"), "fail"),                      # A better than B: gap > 0
    (chk(op=">=", thr=-0.02, metric="gap"), "uncontrolled"),           # A no worse than B: gap >= -2 points
    (chk(op="<=", thr=0.02, metric="abs_gap"), "uncontrolled"),        # A within 2 points of B: |gap| <= 0.02
], ids=["better-than", "no-worse-than", "within"])
def test_the_comparator_in_the_methods_place_fails_a_better_than_claim_and_leaves_the_others_uncontrolled(check, expected):
    c = claim("R", kind="reproduction", units=5, checks=[check], nulls={"aa": "aa", "placebo": "placebo"})
    controls = {"aa": "the comparator against itself, independent seeds", "placebo": "the ingredient shuffled"}
    planted = {"gap": gaps("method_is_comparator", "comparator")}
    planted["abs_gap"] = [abs(g) for g in planted["gap"]]
    aa = {"gap": gaps("comparator_again", "comparator")}
    aa["abs_gap"] = [abs(g) for g in aa["gap"]]
    placebo = {"gap": [-0.2] * 5, "abs_gap": [0.2] * 5}
    row = evaluate(spec(c, controls=controls), planted, "default", {"aa": aa, "placebo": placebo})["claims"][0]
    if expected == "fail":
        assert row["verdict"] != "pass"  # no difference to find: "better than" never passes
    else:  # passes on the planted comparator, and its A/A null passes too: marked uncontrolled, not reproduced
        assert row["verdict"] == "pass" and row["nulls"]["aa"]["verdict"] == "pass" and row["uncontrolled"]
        assert "A/A null" in row["uncontrolled_why"]


@pytest.mark.parametrize("control_values, why", [([0.9, 0.9, 0.9], "passes"), ([0.1, 0.9, 0.6], "inconclusive")])
def test_a_control_that_does_not_fail_marks_the_claim_uncontrolled(control_values, why):
    out = evaluate(spec(repro(), controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": control_values}, **NULLS_FAIL})
    c = out["claims"][0]
    assert c["verdict"] == "pass" and c["uncontrolled"] and why in c["uncontrolled_why"]
    assert out["summary"]["uncontrolled"] == 1


def test_a_sanity_check_may_show_that_it_catches_a_fault():
    s = spec(claim("S", units=3, control="broken"), controls=CONTROLS)
    out = evaluate(s, {"m": [0.9, 0.9, 0.9]}, "default", {"broken": {"m": [0.1, 0.1, 0.1]}})
    c = out["claims"][0]
    assert c["control"]["verdict"] == "fail" and not c["uncontrolled"] and out["summary"]["sanity"]["pass"] == 1


def test_no_control_needs_a_reason_and_is_uncontrolled():
    c = claim("R", kind="reproduction", no_control="nothing to remove: the result is a theorem about the data")
    out = evaluate(spec(c), {"m": [0.9]}, "default")["claims"][0]
    assert out["uncontrolled"] and "theorem" in out["uncontrolled_why"]


def test_a_missing_metric_is_an_error_naming_paper_claim_and_metric():
    with pytest.raises(ClaimsError, match=r"paper x: claim A checks metric 'm_typo'"):
        evaluate(spec(claim("A", checks=[chk(metric="m_typo")])), {"m": [0.9]}, "default")
    with pytest.raises(ClaimsError, match=r"control 'broken', which evaluate did not measure"):
        evaluate(spec(repro(), controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default")
    with pytest.raises(ClaimsError, match=r"\(control broken\): claim R checks metric 'm'"):
        evaluate(spec(repro(), controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default", {"broken": {}})


def test_a_declared_skip_is_inconclusive_with_its_reason():
    s = spec(claim("A", skip={"smoke": "the smoke profile runs one method only"}))
    c = evaluate(s, {}, "smoke")["claims"][0]
    assert c["verdict"] == "inconclusive" and "one method only" in c["checks"][0]["why"]
    with pytest.raises(ClaimsError):
        evaluate(s, {}, "default")


def test_a_closed_gate_makes_its_dependent_claims_inconclusive_and_names_itself():
    gate = claim("K0", checks=[chk(metric="learnt", thr=0.4)], units=3)
    comparison = claim("K1", kind="reproduction", checks=[chk(metric="gap", thr=0.1)], units=3, control="broken",
                       requires=["K0"])
    s = spec(gate, comparison, controls=CONTROLS)
    controls = {"broken": {"gap": [0.0, 0.01, 0.02]}}
    passed, closed = ({"learnt": learnt, "gap": [0.3, 0.35, 0.32]} for learnt in ([0.8, 0.82, 0.79], [0.2, 0.21, 0.22]))
    k1 = evaluate(s, passed, "default", controls)["claims"][1]
    assert k1["verdict"] == "pass" and "gated_by" not in k1
    out = evaluate(s, closed, "default", controls)
    k1 = out["claims"][1]
    assert k1["verdict"] == "inconclusive" and k1["gated_by"] == {"K0": "fail"} and k1["ungated_verdict"] == "pass"
    assert out["summary"]["reproduction"]["inconclusive"] == 1
    inconclusive_gate = {"learnt": [0.2, 0.9, 0.4], "gap": [0.3, 0.35, 0.32]}  # the interval straddles 0.4
    assert evaluate(s, inconclusive_gate, "default", controls)["claims"][1]["gated_by"] == {"K0": "inconclusive"}


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s["claims"][0].pop("kind"), "'kind' is a required property"),
    (lambda s: s["claims"][0].update(kind="reproducton"), "claims.0.kind"),
    (lambda s: s["claims"][0]["checks"][0].update(op="=>"), "claims.0.checks.0.op"),
    (lambda s: s["claims"][0]["checks"][0].update(threshold="0.5"), "claims.0.checks.0.threshold"),
    (lambda s: s["claims"][0].update(units=0), "claims.0.units"),
    (lambda s: s["claims"][0].update(kind="reproduction"), "reproduction claim A names no control"),
    (lambda s: s["claims"][0].update(kind="reproduction", control="nope"), "names control 'nope'"),
    (lambda s: s["claims"].append(copy.deepcopy(s["claims"][0])), "claim id A appears twice"),
    (lambda s: s.update(controls=CONTROLS), "control 'broken' is declared but no claim uses it"),
    (lambda s: s["claims"][0].update(kind="info", no_control="info claims are not judged at all"), "no control"),
    (lambda s: s["claims"][0].update(requires=["A"]), "requires claim 'A', which is not a claim written before it"),
    (lambda s: s["claims"][0].update(requires=["Z"]), "requires claim 'Z'"),
    (lambda s: s["claims"][0]["checks"][0].update(threshold=float("nan")), "threshold (claim A): not a finite number"),
    (lambda s: s["claims"][0]["checks"][0].update(margin={"default": float("inf")}), "margin.default (claim A): not a finite"),
    (lambda s: s["claims"][0]["checks"][0].update(threshold={"default": 1, "smoek": 2}), "'smoek' is not a profile"),
    (lambda s: s["claims"][0].update(skip={"smoek": "too slow"}), "claims.0.skip.smoek (claim A): 'smoek' is not a"),
])
def test_claims_yaml_problems_are_named(mutate, message):
    s = spec(claim("A"))
    assert problems(s, "x/claims.yaml") == []
    mutate(s)
    assert any(message in p for p in problems(s, "x/claims.yaml")), problems(s, "x/claims.yaml")


def test_declared_nulls_pass_the_schema_and_a_bad_one_is_named():
    """The schema's `null` definition is reachable (a bare YAML `null:` key would be None, and every $ref to it an
    error): a named null and {none: why} are valid, an empty reason is not."""
    s = spec(repro(), controls=CONTROLS)
    assert problems(s, "x/claims.yaml") == []
    s = spec(repro(nulls={"aa": "aa", "placebo": {"none": "nothing smaller to remove"}}),
             controls={k: v for k, v in CONTROLS.items() if k != "placebo"})
    assert problems(s, "x/claims.yaml") == []
    s["claims"][0]["nulls"]["placebo"] = {"none": ""}
    assert any("claims.0.nulls.placebo" in p for p in problems(s, "x/claims.yaml")), problems(s, "x/claims.yaml")


def test_every_paper_claims_file_is_valid():
    from workflow.papers import PAPERS

    validate_papers(PAPERS)
    with pytest.raises(ClaimsError, match="no_such_paper/claims.yaml: missing"):
        validate_papers(["no_such_paper"])


def test_claims_files_that_passed_unchanged_are_not_checked_again_and_an_edit_is(tmp_path):
    import shutil

    from workflow.core.params import ROOT

    papers = tmp_path / "workflow" / "papers"
    (papers / "cosa").mkdir(parents=True)
    shutil.copy(ROOT / "workflow/papers/cosa/claims.yaml", papers / "cosa/claims.yaml")
    validate_papers(["cosa"], papers)
    assert len(list((tmp_path / ".cache/claims-valid").iterdir())) == 1
    text = (papers / "cosa/claims.yaml").read_text()
    (papers / "cosa/claims.yaml").write_text(text.replace('op: ">="', 'op: "=>"', 1))  # not an operator
    with pytest.raises(ClaimsError, match="cosa/claims.yaml"):
        validate_papers(["cosa"], papers)


def test_snakemake_rejects_a_bad_claims_file_before_any_job(tmp_path):
    from conftest import BIN, copy_repo, run

    repo = copy_repo(tmp_path)
    import yaml

    path = repo / "workflow/papers/cosa/claims.yaml"
    broken = yaml.safe_load(path.read_text())
    broken["claims"][0]["checks"][0]["op"] = "=>"
    path.write_text(yaml.safe_dump(broken))
    done = run([str(BIN / "snakemake"), "--cores", "1"], repo, check=False)
    assert done.returncode != 0
    assert "workflow/papers/cosa/claims.yaml" in done.stderr and "op" in done.stderr
    assert not (repo / "results").exists()  # nothing ran


def test_the_a_a_stand_in_takes_the_comparators_rows_of_another_seed_of_the_same_unit():
    import pandas as pd

    from workflow.core.claims import stand_in

    t = pd.DataFrame({"data": ["a"] * 6 + ["b"] * 2, "seed": [0, 1, 2, 0, 1, 2, 0, 0],
                      "method": ["m", "m", "m", "c", "c", "c", "m", "c"], "v": [1, 2, 3, 10, 20, 30, 5, 50]})
    aa = stand_in(t, "method", {"m": "c"}, seed="seed", keys=["data"])
    got = aa[aa.method == "m"].sort_values("seed")
    assert got.data.tolist() == ["a", "a", "a"] and got.v.tolist() == [30, 10, 20]  # seed s shows c's seed s-1
    assert len(aa[aa.method == "c"]) == 4  # the comparator keeps its own rows; unit b (one seed) gives no A/A unit
    same = stand_in(t, "method", {"m": "c"})  # without seed: the control's own rows (a negative control)
    assert sorted(same[same.method == "m"].v) == [10, 20, 30, 50]


def test_a_claim_with_an_a_a_null_and_no_placebo_is_uncontrolled_until_one_is_built():
    c = claim("R", kind="reproduction", units=3, nulls={"aa": "aa"})
    out = evaluate(spec(c, controls={"aa": CONTROLS["aa"]}), {"m": [0.9, 0.9, 0.9]}, "default", {"aa": NULLS_FAIL["aa"]})
    row = out["claims"][0]
    assert row["nulls"]["aa"]["verdict"] == "fail" and row["uncontrolled_why"] == "no placebo declared"


def test_a_null_undecided_on_a_measured_interval_did_its_job_and_one_without_values_did_not():
    c = claim("R", kind="reproduction", units=3, nulls={"aa": "aa", "placebo": "placebo"})
    s = spec(c, controls={"aa": CONTROLS["aa"], "placebo": CONTROLS["placebo"]})
    straddling = {"m": [0.2, 0.9, 0.4]}  # the comparator against itself: the interval contains the threshold
    out = evaluate(s, {"m": [0.9, 0.9, 0.9]}, "default", {"aa": straddling, "placebo": NULLS_FAIL["placebo"]})
    assert out["claims"][0]["nulls"]["aa"]["verdict"] == "inconclusive" and not out["claims"][0]["uncontrolled"]
    out = evaluate(s, {"m": [0.9, 0.9, 0.9]}, "default", {"aa": {"m": []}, "placebo": NULLS_FAIL["placebo"]})
    assert out["claims"][0]["uncontrolled_why"].startswith("the A/A null (the comparator in the method's place) has "
                                                           "no value here (no value measured")


def test_a_claim_that_can_have_no_negative_control_is_still_judged_on_its_nulls():
    c = claim("R", kind="reproduction", units=3, no_control="timing: removing the design leaves the comparator",
              nulls={"aa": "aa", "placebo": "placebo"})
    s = spec(c, controls={"aa": CONTROLS["aa"], "placebo": CONTROLS["placebo"]})
    row = evaluate(s, {"m": [0.9, 0.9, 0.9]}, "default", NULLS_FAIL)["claims"][0]
    assert row["control"] == {"none": c["no_control"]} and row["nulls"]["aa"]["verdict"] == "fail"
    assert not row["uncontrolled"]


def test_declaring_nulls_after_results_is_no_amendment_a_pass_rests_on():
    nulls_only = {"date": "2026-12-06", "what": "nulls", "changed": {"nulls.aa": [None, "aa"]}, "why": "w",
                  "verdict": "-", "after_results": True}
    c = repro(amendments=[nulls_only])
    out = evaluate(spec(c, controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": [0.1, 0.1, 0.1]}, **NULLS_FAIL})
    assert not out["claims"][0]["amended_after_results"] and out["summary"]["passes_on_amendment"] == 0
    threshold = dict(nulls_only, changed={"checks.0.threshold": [0.6, 0.5]})
    out = evaluate(spec(repro(amendments=[nulls_only, threshold]), controls=CONTROLS), {"m": [0.9, 0.9, 0.9]}, "default",
                   {"broken": {"m": [0.1, 0.1, 0.1]}, **NULLS_FAIL})
    assert out["summary"]["passes_on_amendment"] == 1
