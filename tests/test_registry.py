"""The claims registry: each claim's definition as registered, every change since an amendment on the record."""
import copy
import subprocess

import pytest

from conftest import ROOT
from workflow.tools import registry as R
from workflow.core.claims import load
from workflow.papers import PAPERS


def has_history() -> bool:
    """The registered commits are in this clone (a shallow clone lacks them)."""
    return subprocess.run(["git", "cat-file", "-e", "c893a84^{commit}"], cwd=ROOT, capture_output=True).returncode == 0


@pytest.mark.skipif(not has_history(), reason="git history not available (shallow clone): registered commits unreadable")
def test_every_claim_matches_its_registered_version_and_amendments():
    assert R.check(PAPERS) == []


def cosa_k1():
    return next(c for c in load(ROOT / "workflow/papers/cosa/claims.yaml")["claims"] if c["id"] == "K1")


def registered_k1(claim):
    """K1 as registered: today's definition with its amendments undone (what git holds at its registered commit)."""
    state = R.flat(claim)
    for a in reversed(claim.get("amendments", [])):
        for path, (before, _) in a.get("changed", {}).items():
            state.pop(path) if before is None else state.__setitem__(path, before)
    return state


def test_a_threshold_moved_without_an_amendment_is_refused():
    claim = cosa_k1()
    registered = registered_k1(claim)
    assert R.check_claim("cosa", claim, registered) == []
    moved = copy.deepcopy(claim)
    moved["checks"][0]["threshold"] = 0.04  # after seeing a 4.5 % gain, say
    assert R.check_claim("cosa", moved, registered) == [
        "cosa claim K1: checks.0.threshold: 0.05 -> 0.04 without an amendment"]
    moved["amendments"] = [*claim.get("amendments", []), {
        "date": "2026-12-06", "what": "threshold 5 % -> 4 %", "changed": {"checks.0.threshold": [0.05, 0.04]},
        "why": "a test", "verdict": "inconclusive -> pass", "after_results": True}]
    assert R.check_claim("cosa", moved, registered) == []


def test_an_amendment_that_misstates_the_old_value_is_refused():
    claim = copy.deepcopy(cosa_k1())
    claim["amendments"] = [*claim.get("amendments", []), {
        "date": "2026-12-06", "what": "kind", "changed": {"kind": ["sanity", "reproduction"]}, "why": "a test",
        "verdict": "pass -> pass", "after_results": True}]
    problems = R.check_claim("cosa", claim, registered_k1(cosa_k1()))
    assert problems == ["cosa claim K1: amendment of 2026-12-06 says kind was 'sanity', but it was 'reproduction'"]


def test_a_claim_without_registration_is_named():
    claim = copy.deepcopy(cosa_k1())
    del claim["registered"]
    assert "no `registered:`" in R.check_claim("cosa", claim, None)[0]


def test_amended_passes_are_counted_in_the_headline():
    from workflow.core.claims import evaluate

    c = {"id": "R", "kind": "reproduction", "statement": "s", "paper_value": "p", "source": "x", "why": "w",
         "units": 1, "no_control": "a test claim with nothing to control",
         "checks": [{"metric": "m", "op": ">=", "threshold": 0.5}],
         "amendments": [{"date": "2026-12-06", "what": "threshold", "changed": {"checks.0.threshold": [0.6, 0.5]},
                         "why": "w", "verdict": "fail -> pass", "after_results": True}]}
    out = evaluate({"paper": {"slug": "x", "title": "X"}, "claims": [c]}, {"m": [0.55]}, "default")
    assert out["claims"][0]["amended_after_results"] and out["summary"]["passes_on_amendment"] == 1
