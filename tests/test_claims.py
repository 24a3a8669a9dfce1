"""Claim verdicts from seed statistics."""
from workflow.core.claims import check_verdict, evaluate


def chk(op=">=", thr=0.5, agg="mean"):
    return {"metric": "m", "op": op, "threshold": thr, "aggregate": agg}


def test_clear_pass_and_fail():
    assert check_verdict(chk(), [0.9, 0.91, 0.89], "default", 3)["verdict"] == "pass"
    assert check_verdict(chk(), [0.1, 0.12, 0.11], "default", 3)["verdict"] == "fail"


def test_interval_straddling_threshold_is_inconclusive():
    out = check_verdict(chk(), [0.2, 0.9, 0.6], "default", 3)
    assert out["verdict"] == "inconclusive" and out["ci95"][0] < 0.5 < out["ci95"][1]


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


def test_claim_combines_checks_and_info_is_never_judged():
    spec = {"paper": {"slug": "x"}, "claims": [
        {"id": "A", "units": 1, "checks": [chk(), {**chk(), "metric": "n"}]},
        {"id": "B", "kind": "info", "units": 1, "checks": [chk()]}]}
    out = evaluate(spec, {"m": [0.9], "n": [0.1]}, "default")
    assert [c["verdict"] for c in out["claims"]] == ["fail", "info"]
    assert out["summary"] == {"pass": 0, "fail": 1, "inconclusive": 0, "info": 1}


def test_all_aggregate_fails_on_one_counterexample():
    assert check_verdict(chk("<=", 0.0, "all"), [0.0, 0.0, 0.0], "default", 3)["verdict"] == "pass"
    out = check_verdict(chk("<=", 0.0, "all"), [0.0, 0.0, 1e-3], "default", 3)
    assert out["verdict"] == "fail" and out["value"] == 1e-3 and out["frac_pass"] == 2 / 3


def test_a_check_can_need_fewer_units_than_its_claim():
    """A pooled count (one number over all cells) is one unit, beside per-cell checks of the same claim."""
    spec = {"paper": {"slug": "x"}, "claims": [
        {"id": "A", "units": {"default": 3, "smoke": 1}, "checks": [chk(), {**chk(), "metric": "n", "units": 1}]}]}
    out = evaluate(spec, {"m": [0.9, 0.8, 0.95], "n": [0.9]}, "default")
    assert [c["verdict"] for c in out["claims"][0]["checks"]] == ["pass", "pass"]
    del spec["claims"][0]["checks"][1]["units"]
    assert evaluate(spec, {"m": [0.9, 0.8, 0.95], "n": [0.9]}, "default")["claims"][0]["verdict"] == "inconclusive"
