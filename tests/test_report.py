"""The report's verdict table (what `make readme` puts into README.md) and its splicing."""
import pytest

from workflow.core.claims import evaluate
from workflow.report.build import claim_rows, verdict_table
from workflow.report.readme import END, START, splice


def section(slug, measured, control):
    spec = {"paper": {"slug": slug, "title": slug.upper()},
            "controls": {"broken": "the mechanism removed", "aa": "the comparator", "placebo": "the ingredient inert"},
            "claims": [{"id": "R1", "kind": "reproduction", "statement": "s", "paper_value": "p", "source": "x",
                        "why": "w", "units": 1, "control": "broken", "nulls": {"aa": "aa", "placebo": "placebo"},
                        "checks": [{"metric": "m", "op": ">=", "threshold": 0.5}]},
                       {"id": "S1", "kind": "sanity", "statement": "s", "paper_value": "p", "source": "x", "why": "w",
                        "checks": [{"metric": "m", "op": ">=", "threshold": 0.0}]}]}
    nulls = {"aa": {"m": [0.1]}, "placebo": {"m": [0.2]}}
    return {"slug": slug, "title": slug.upper(), "claims": evaluate(spec, measured, "default", {"broken": control} | nulls)}


def test_reproduction_and_sanity_counts_apart_and_uncontrolled_named():
    sections = [section("a", {"m": [0.9]}, {"m": [0.1]}), section("b", {"m": [0.9]}, {"m": [0.9]})]
    table = verdict_table(sections, "default")
    lines = table.splitlines()
    assert "from the default profile" in lines[0]
    assert "| [a](workflow/papers/a/PAPER.md) — A | 1 / 0 / 0 / 0 / 0 | 0 | none | 1 / 0 / 0 | 0 |" in lines
    assert "| [b](workflow/papers/b/PAPER.md) — B | 0 / 1 / 0 / 0 / 0 | 0 | R1 | 1 / 0 / 0 | 0 |" in lines
    assert lines[-1] == "| **all 2 papers** | **1 / 1 / 0 / 0 / 0** | 0 | 1 | 2 / 0 / 0 | 0 |"
    rows = claim_rows("b", sections[1]["claims"])
    assert rows[0]["control_verdict"] == "pass" and "passes" in rows[0]["uncontrolled"] and rows[1]["kind"] == "sanity"


def test_splice_replaces_only_the_marked_block():
    readme = f"intro\n{START}\nold table\n{END}\nafter\n"
    assert splice(readme, "new table\n") == f"intro\n{START}\nnew table\n{END}\nafter\n"
    with pytest.raises(SystemExit, match="marker"):
        splice("no markers here", "t")


def test_the_page_shows_kinds_controls_and_uncontrolled_claims():
    from workflow.report.build import render

    sections = [section("a", {"m": [0.9]}, {"m": [0.1]}), section("b", {"m": [0.9]}, {"m": [0.9]})]
    for s in sections:
        s.update(rows=claim_rows(s["slug"], s["claims"]), figures=[], sounds=[], paper_md="", costs=[], provenance=[])
    html = render(sections, "T", "default")
    assert html.count("<b>uncontrolled</b>: ") == 1 and "the control passes the same checks" in html
    assert "<td>sanity</td>" in html and "the mechanism removed (verdict fail)" in html


def readme_run(slug, measured, control, commits=("abc1234",), seconds=600.0, start=0.0):
    s = section(slug, measured, control)
    return s | {"commits": list(commits), "job_seconds": seconds, "start": start, "end": start + seconds, "cpu": "cpu X"}


def test_the_readme_block_is_generated_from_the_results_with_values_times_and_commit():
    from workflow.report.readme import block

    runs = [readme_run("a", {"m": [0.9]}, {"m": [0.1]}), readme_run("b", {"m": [0.3]}, {"m": [0.1]}, start=600.0)]
    text = block(runs, missing=["c"])
    assert "from one commit, abc1234; 20.0 min of wall clock" in text and "20.0 min of job time" in text
    assert "| 1 / 0 / 0 / 0 / 0 | 0 | none | 1 / 0 / 0 | 0 | 10.0 min | abc1234 |" in text
    assert "| [c](workflow/papers/c/PAPER.md) | not run at the default profile |" in text
    assert "  - R1: s Paper: p. Ours: m 0.9 (≥ 0.5). **pass, both nulls fail**." in text
    assert "  - R1: s Paper: p. Ours: m 0.3 (≥ 0.5). **fail**." in text


def test_the_readme_says_when_the_results_are_not_one_run_of_one_commit_and_why_a_pass_is_uncontrolled():
    from workflow.report.readme import block

    runs = [readme_run("a", {"m": [0.9]}, {"m": [0.9]}, commits=("abc1234", "def5678"))]
    text = block(runs, missing=[])
    assert "2 commits (abc1234, def5678): not one run of one commit" in text
    assert "**pass, uncontrolled (A/A null: fails; placebo: fails; negative control: passes)**" in text


def test_the_readme_marks_a_paper_whose_claims_were_amended_after_its_run():
    from workflow.report.readme import amended_since, block

    run = readme_run("a", {"m": [0.9]}, {"m": [0.1]}, commits=("abc1234-dirty",))
    spec = {"claims": [{"id": "R1", "amendments": [{"what": "placebo declared"}]}, {"id": "S1"}]}
    run["amended_since"] = amended_since(spec, run["claims"])
    assert run["amended_since"] == ["R1"]
    assert "| abc1234-dirty (claims R1 amended since: re-run) |" in block([run], missing=[])
