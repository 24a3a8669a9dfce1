"""Write the README's verdicts from the last default-profile run (`make readme`).

Everything between the README's two marker lines is generated here from results/, nothing typed by hand, so it
cannot drift from what was run:
- the run: the commit(s) its jobs ran at (from their run records), its wall clock from the first job's start to
  the last job's end, and the jobs' summed time (from their Snakemake benchmark files);
- the verdict table: per paper the headline's five columns, the passes resting on an amendment, the uncontrolled
  claims, the sanity counts, the paper's job time and commit;
- one line per reproduction claim: its statement, the paper's number beside ours, the verdict and, for a pass
  the nulls do not control or an inconclusive, why.
Commentary (causes, diagnoses) lives in each paper's PAPER.md. A paper without a default-profile claims.json is
listed as not run. Everything outside the markers is left as written.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json
from workflow.core.params import ROOT, read_yaml
from workflow.papers import PAPERS
from workflow.report.build import HEADLINE_HEADER, counts, headline, inconclusive_cause, records, step_costs

START, END = "<!-- verdicts:start (make readme) -->", "<!-- verdicts:end -->"
PROFILE = "default"  # the README shows the default profile's verdicts only
OPS = {">=": "≥", "<=": "≤", ">": ">", "<": "<", "==": "="}


def splice(readme: str, block: str) -> str:
    if START not in readme or END not in readme:
        raise SystemExit(f"README.md lacks the marker lines {START!r} and {END!r} around the verdicts")
    head, rest = readme.split(START, 1)
    return head + START + "\n" + block + rest[rest.index(END):]


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.2f} h"


def short(commit: str) -> str:
    return commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")  # a job run from uncommitted code says so


def amended_since(spec: dict, claims: dict) -> list[str]:
    """The claims whose definition was amended (or that were added) after this claims.json was judged: its verdicts
    predate them, and the paper needs a new run."""
    judged = {c["id"]: len(c.get("amendments", [])) for c in claims["claims"]}
    return [c["id"] for c in spec["claims"] if judged.get(c["id"]) != len(c.get("amendments", []))]


def paper_run(slug: str) -> dict | None:
    """What the default run left for one paper: its claims, title, the commits and span of its jobs, their time;
    None when the paper has no default-profile claims.json."""
    path = ROOT / "results" / slug / "claims.json"
    if not path.exists() or read_json(path).get("profile") != PROFILE:
        return None
    recs = records(slug, PROFILE)
    starts = [r["started_ms"] / 1000 for r in recs.values() if "started_ms" in r]
    ends = [r["started_ms"] / 1000 + r["seconds"] for r in recs.values() if "started_ms" in r and "seconds" in r]
    spec, claims = read_yaml(ROOT / "workflow" / "papers" / slug / "claims.yaml"), read_json(path)
    return {"slug": slug, "title": spec["paper"]["title"], "claims": claims, "amended_since": amended_since(spec, claims),
            "commits": sorted({short(r.get("git_commit", "unknown")) for r in recs.values()}),
            "job_seconds": sum(c["seconds"] for c in step_costs(slug, recs)),
            "start": min(starts, default=None), "end": max(ends, default=None),
            "cpu": next((r["environment"].get("cpu") for r in recs.values() if "environment" in r), "unknown")}


def run_line(runs: list[dict]) -> str:
    """The run the table comes from: its commits, wall clock, job time and machine."""
    commits = sorted({c for r in runs for c in r["commits"]})
    starts = [r["start"] for r in runs if r["start"] is not None]
    ends = [r["end"] for r in runs if r["end"] is not None]
    wall = f"{minutes(max(ends) - min(starts))} of wall clock from the first job's start to the last job's end" if starts else "no timed jobs"
    one = f"one commit, {commits[0]}" if len(commits) == 1 else f"{len(commits)} commits ({', '.join(commits)}): not one run of one commit"
    return (f"The {PROFILE} profile's results of {len(runs)} of {len(PAPERS)} papers, from {one}; {wall}; "
            f"{minutes(sum(r['job_seconds'] for r in runs))} of job time (the jobs' benchmark files summed; one thread "
            f"each); CPU {', '.join(sorted({r['cpu'] for r in runs}))}.")


def table(runs: list[dict], missing: list[str]) -> str:
    lines = [f"| paper | {HEADLINE_HEADER} | passes on an amendment | uncontrolled | sanity: pass / fail / inconclusive "
             "| info | job time | commit |", "|---|---|---|---|---|---|---|---|"]
    for r in runs:
        summary, claims = r["claims"]["summary"], r["claims"]["claims"]
        uncontrolled = ", ".join(c["id"] for c in claims if c["kind"] == "reproduction" and c.get("uncontrolled")) or "none"
        lines.append(f"| [{r['slug']}](workflow/papers/{r['slug']}/PAPER.md) — {r['title']} | {headline(summary)} "
                     f"| {summary['passes_on_amendment']} | {uncontrolled} | {counts(summary, 'sanity')} "
                     f"| {summary['info']} | {minutes(r['job_seconds'])} | {', '.join(r['commits'])}{stale(r)} |")
    lines += [f"| [{slug}](workflow/papers/{slug}/PAPER.md) | not run at the {PROFILE} profile | | | | | | |" for slug in missing]
    total = claims_mod.summarise([c for r in runs for c in r["claims"]["claims"]])
    lines.append(f"| **all {len(runs)} papers** | **{headline(total)}** | {total['passes_on_amendment']} "
                 f"| {total['uncontrolled']} | {counts(total, 'sanity')} | {total['info']} "
                 f"| {minutes(sum(r['job_seconds'] for r in runs))} | |")
    return "\n".join(lines)


def stale(run: dict) -> str:
    ids = run.get("amended_since") or []
    return f" (claims {', '.join(ids)} amended since: re-run)" if ids else ""


def value(check: dict) -> str:
    shown = "no value" if check.get("value") is None else f"{check['value']:.4g}"
    return f"{check['metric']} {shown} ({OPS.get(check['op'], check['op'])} {check['threshold']:g})"


def null_state(role: str, null: dict | None) -> str:
    """One null in a few words: what it did, or why there is none (the reason's first clause; the whole reason is
    in claims.yaml and the report)."""
    if null is None:
        return f"{role}: not declared"
    if "none" in null:
        return f"{role}: none ({re.split(r'[:;(]', null['none'], maxsplit=1)[0].strip()})"
    if claims_mod.unmeasured(null) and null["verdict"] == "inconclusive":
        return f"{role}: no value"
    return f"{role}: {'passes' if null['verdict'] == 'pass' else 'fails'}"


def verdict(claim: dict) -> str:
    """The claim's place in the headline, with the reason where it is not a controlled pass or a plain fail."""
    column = claims_mod.headline_column(claim)
    if column == "pass_uncontrolled":
        nulls = claim.get("nulls") or {}
        states = [null_state(name, nulls.get(role)) for role, name in (("aa", "A/A null"), ("placebo", "placebo"))]
        control = claim.get("control", {})
        if control.get("verdict") in ("pass", "inconclusive"):
            states.append(f"negative control: {'passes' if control['verdict'] == 'pass' else 'inconclusive'}")
        return f"pass, uncontrolled ({'; '.join(states)})"
    if column == "gated":
        return "gated (" + "; ".join(f"gate {g}: {v}" for g, v in claim["gated_by"].items()) + ")"
    if column == "inconclusive":
        return f"inconclusive ({inconclusive_cause(claim)})"
    return {"pass_controlled": "pass, both nulls fail", "fail": "fail"}[column]


def claim_lines(run: dict) -> list[str]:
    lines = [f"- **{run['slug']}** — {run['title']} ([PAPER.md](workflow/papers/{run['slug']}/PAPER.md))"]
    for c in run["claims"]["claims"]:
        if c["kind"] != "reproduction":
            continue
        amended = " (definition amended after results: see PAPER.md)" if c.get("amended_after_results") else ""
        lines.append(f"  - {c['id']}: {c['statement'].strip()} Paper: {c.get('paper_value', '—')}. "
                     f"Ours: {'; '.join(value(chk) for chk in c['checks'])}. **{verdict(c)}**{amended}.")
    return lines


def block(runs: list[dict], missing: list[str]) -> str:
    out = ["<!-- generated by `make readme` from results/ (claims.json, run records, benchmark files): edit nothing "
           "between these markers -->", run_line(runs) if runs else f"No {PROFILE}-profile results yet.", "",
           table(runs, missing), "", "Every reproduction claim (sanity checks and demonstrations are in the report):", ""]
    for run in runs:
        out += claim_lines(run)
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    runs = [r for slug in PAPERS if (r := paper_run(slug))]
    if not runs:
        raise SystemExit(f"no {PROFILE}-profile claims.json under results/: run `make reproduce` first")
    missing = [slug for slug in PAPERS if slug not in {r["slug"] for r in runs}]
    readme = ROOT / "README.md"
    readme.write_text(splice(readme.read_text(), block(runs, missing)))
    print(f"README.md: verdicts of {len(runs)} papers written" + (f"; not run: {', '.join(missing)}" if missing else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
