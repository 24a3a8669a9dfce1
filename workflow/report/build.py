"""Build results/report/: a static index.html (opens without a server) and claims.csv, across all papers.

Per paper: each claim with the paper's number beside ours and the verdict, the figures (embedded), the
deviation log (PAPER.md), the cost of each step (Snakemake benchmark files) and provenance (git commit,
params hash, MLflow run id from the run records).
"""
from __future__ import annotations

import base64
import re
import time
import urllib.parse
from pathlib import Path

import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.records import read_records
from workflow.core.params import ROOT, read_yaml
from workflow.core.resources import peak_mb
from workflow.core.step import Step, git_commit
from workflow.core.store import dashboard_url, tracking_uri

READS = ("report",)

TEMPLATE = Path(__file__).with_name("template.html")


INCONCLUSIVE_CAUSES = {  # what a check's `why` starts with -> the cause the page names
    "not measured in the": "not run in this profile",
    "no value measured": "no value measured",
    "95% interval": "interval contains the threshold",
}


def inconclusive_cause(claim: dict) -> str:
    """Why an inconclusive claim is undecided: a closed gate, a check not run in this profile, too few units, an
    interval that contains the threshold, a value not measured (the first inconclusive check decides)."""
    if claim.get("gated_by"):
        return "gated"
    for chk in claim["checks"]:
        if chk["verdict"] == "inconclusive":
            why = chk.get("why", "")
            if " units < " in why:
                return "too few units"
            return next((cause for start, cause in INCONCLUSIVE_CAUSES.items() if why.startswith(start)), "other")
    return "other"


def claim_rows(paper: str, claims: dict) -> list[dict]:
    """One row per check: the paper's number beside ours, the verdict, and the control's value and verdict."""
    rows = []
    for c in claims["claims"]:
        control = c.get("control") or {}
        control_checks = control.get("checks", [])
        gated = "; ".join(f"gate {g} did not pass ({v}): inconclusive, its checks alone say {c['ungated_verdict']}"
                          for g, v in c.get("gated_by", {}).items())
        nulls = c.get("nulls") or {}
        amended = "; ".join(f"{a['date']}: {a['what']} ({a['verdict']})" for a in c.get("amendments", []))
        for i, chk in enumerate(c["checks"]):
            ctl = control_checks[i] if i < len(control_checks) else {}
            null_cells = {}
            for role in ("aa", "placebo"):
                null = nulls.get(role, {})
                judged = null.get("checks", [])[i] if i < len(null.get("checks", [])) else {}
                null_cells |= {f"{role}_null": (null.get("name") or ("none: " + null["none"] if "none" in null else ""))
                               if i == 0 else "", f"{role}_value": judged.get("value"), f"{role}_verdict": judged.get("verdict", "")}
            rows.append({"paper": paper, "claim": c["id"], "kind": c["kind"], "verdict": c["verdict"],
                         "inconclusive_cause": inconclusive_cause(c) if c["verdict"] == "inconclusive" else "",
                         "statement": c["statement"] if i == 0 else "", "paper_value": c["paper_value"] if i == 0 else "",
                         "metric": chk["metric"], "criterion": f"{chk['aggregate']} {chk['op']} {chk['threshold']:g}",
                         "ours": chk.get("value"), "n": chk["n"],
                         "spread": (f"[{chk['min']:.4g}, {chk['max']:.4g}] n={chk['n']}" if "min" in chk else f"n={chk['n']}"),
                         "check_verdict": chk["verdict"],
                         "rule": "single unit" if chk.get("rule") == "t-interval" and chk["n"] == 1 else chk.get("rule", ""),
                         "why": "; ".join(filter(None, [gated if i == 0 else "", chk.get("why", "")])),
                         "control": control.get("name", "") if i == 0 else "", "control_value": ctl.get("value"), "control_frac_pass": ctl.get("frac_pass"),
                         "control_verdict": ctl.get("verdict", ""),
                         "uncontrolled": c.get("uncontrolled_why", "") if i == 0 and c.get("uncontrolled") else "",
                         **null_cells,
                         "headline": claims_mod.headline_column(c) if c["kind"] == "reproduction" and i == 0 else "",
                         "gated_by": ", ".join(c.get("gated_by", {})), "ungated_verdict": c.get("ungated_verdict", ""),
                         "registered": (c.get("registered") or {}).get("commit", "") if i == 0 else "",
                         "amendments": amended if i == 0 else ""})
    return rows


def records(paper: str, profile: str) -> dict[Path, dict]:
    """The run records of this profile's jobs (records left by another profile's run are ignored)."""
    logs = ROOT / "results" / paper / "logs"
    found, _ = read_records(sorted(logs.glob("**/*.run.json")))  # a failed job's empty file is no record
    return {path: rec for path, rec in found.items() if rec.get("profile") == profile}


def step_costs(paper: str, recs: dict[Path, dict]) -> list[dict]:
    """Snakemake benchmark files of these jobs, summed per step (absent when `dvc repro` made the run)."""
    costs: dict[str, dict] = {}
    for path, record in recs.items():
        job = path.relative_to(ROOT / "results" / paper / "logs")
        tsv = ROOT / "results" / paper / "bench" / job.parent / (job.name.removesuffix(".run.json") + ".tsv")
        if tsv.exists():
            b = pd.read_csv(tsv, sep="\t", dtype=str).iloc[-1]
            c = costs.setdefault(job.parts[0], {"step": job.parts[0], "jobs": 0, "seconds": 0.0, "max_rss_mb": 0.0})
            c["jobs"] += 1
            c["seconds"] += float(b["s"])
            c["max_rss_mb"] = max(c["max_rss_mb"], peak_mb(b, record))
    return list(costs.values())


def provenance(recs: dict[Path, dict]) -> list[dict]:
    keys = ("rule", "wildcards", "git_commit", "params_hash", "profile", "mlflow_run_id", "seconds")
    return [{k: r.get(k) for k in keys} for r in recs.values()]


MEDIA = {".png": "image/png", ".wav": "audio/wav"}


def embed(path: Path) -> str:
    """The file as a data URI: the page is one self-contained file, its figures and sounds inside."""
    return f"data:{MEDIA[path.suffix]};base64," + base64.b64encode(path.read_bytes()).decode()


def paper_section(paper: str, figures: list[Path], profile: str) -> dict:
    from markdown_it import MarkdownIt

    folder = ROOT / "workflow" / "papers" / paper
    claims = read_json(ROOT / "results" / paper / "claims.json")
    card = folder / "PAPER.md"
    recs = records(paper, profile)
    return {"slug": paper, "title": read_yaml(folder / "claims.yaml")["paper"]["title"], "claims": claims,
            "rows": claim_rows(paper, claims), "figures": [{"name": f.stem, "src": embed(f)} for f in figures if f.suffix == ".png"],
            "sounds": [{"name": f.stem, "src": embed(f)} for f in figures if f.suffix == ".wav"],
            "paper_md": MarkdownIt("commonmark").enable("table").render(card.read_text()) if card.exists() else "",
            "costs": step_costs(paper, recs), "provenance": provenance(recs)}


# References to the project's issue tracker: a reader of the page has no access to it
TRACKER_ASIDE = re.compile(r"\s*\((?:[^()]*?\b)?[Ii]ssues?[- ]\d+[^()]*\)")  # "(issue 10)", "(see issues 10, 12)"
TRACKER_WORDS = re.compile(r"\b([Ii])ssues?[- ]\d+(?:(?:, | and )\d+)*('s)?")  # "issue 10's", "Issue-10"


def public(page: str) -> str:
    """The page without what only its builders can read: absolute paths of the machine that built it, and
    references to the project's issue tracker (an aside goes; a reference in a sentence becomes "a review")."""
    page = TRACKER_ASIDE.sub("", page.replace(str(ROOT) + "/", "").replace(str(ROOT), "."))
    return TRACKER_WORDS.sub(lambda m: ("A review" if m[1] == "I" else "a review") + (m[2] or ""), page)


def environment_line() -> str:
    """What the results may depend on besides code, data and params (no host, no paths): the footer's."""
    from workflow.core.step import environment

    env = environment()
    return ", ".join(f"{k} {env[k]}" for k in ("python", "machine", "lock_sha256", "torch") if k in env)


def paper_link(title: str) -> str:
    return "https://openreview.net/search?term=" + urllib.parse.quote(title)


def render(sections: list[dict], title: str, profile: str) -> str:
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = lambda v: "—" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
    claims = [c for s in sections for c in s["claims"]["claims"]]
    totals = claims_mod.summarise(claims)
    causes = {}
    for c in claims:
        if c["kind"] == "reproduction" and c["verdict"] == "inconclusive":
            cause = inconclusive_cause(c)
            causes[cause] = causes.get(cause, 0) + 1
    store = "the project's SQLite store (mlflow.db)" if tracking_uri().startswith("sqlite:") else tracking_uri()
    page = env.from_string(TEMPLATE.read_text()).render(
        sections=sections, title=title, profile=profile, totals=totals, causes=causes, store=store,
        dashboard=dashboard_url(), headline=claims_mod.HEADLINE, paper_link=paper_link, commit=git_commit(),
        built=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), environment=environment_line())
    return public(page)


def counts(summary: dict, kind: str) -> str:
    return " / ".join(str(summary[kind][v]) for v in claims_mod.VERDICTS)


def headline(summary: dict) -> str:
    return " / ".join(str(summary["headline"][col]) for col in claims_mod.HEADLINE)


HEADLINE_HEADER = "reproduction: pass (no null passes) / pass uncontrolled / fail / inconclusive / gated"


def verdict_table(sections: list[dict], profile: str) -> str:
    """The README's verdict table: the five headline columns of reproduction claims, the passes resting on an
    amendment made after results, uncontrolled claims named, sanity counts apart."""
    lines = [f"<!-- generated from the {profile} profile's results/report/verdicts.md at commit {git_commit()} -->",
             f"| paper | {HEADLINE_HEADER} | passes on an amendment | uncontrolled | sanity: pass / fail / inconclusive "
             "| info |",
             "|---|---|---|---|---|---|"]
    for s in sections:
        summary, claims = s["claims"]["summary"], s["claims"]["claims"]
        uncontrolled = ", ".join(c["id"] for c in claims if c["kind"] == "reproduction" and c.get("uncontrolled")) or "none"
        lines.append(f"| [{s['slug']}](workflow/papers/{s['slug']}/PAPER.md) — {s['title']} | {headline(summary)} "
                     f"| {summary['passes_on_amendment']} | {uncontrolled} | {counts(summary, 'sanity')} | {summary['info']} |")
    total = claims_mod.summarise([c for s in sections for c in s["claims"]["claims"]])
    lines.append(f"| **all {len(sections)} papers** | **{headline(total)}** | {total['passes_on_amendment']} "
                 f"| {total['uncontrolled']} | {counts(total, 'sanity')} | {total['info']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    step = Step("report", "build", __doc__)
    step.parser.add_argument("--papers", nargs="+", required=True)
    step.parser.add_argument("--figures", type=Path, nargs="*", default=[])
    step.parser.add_argument("--html", type=Path, required=True)
    step.parser.add_argument("--csv", type=Path, required=True)
    step.parser.add_argument("--verdicts", type=Path, required=True, help="the verdict table (markdown) of the README")
    args, p = step.start(argv)
    sections = [paper_section(paper, [f for f in args.figures if f.parts[-3] == paper], args.profile) for paper in args.papers]
    write_text(args.html, render(sections, p["title"], args.profile))
    rows = [r for s in sections for r in s["rows"]]
    write_text(args.csv, pd.DataFrame(rows).to_csv(index=False))
    write_text(args.verdicts, verdict_table(sections, args.profile))
    totals = claims_mod.summarise([c for s in sections for c in s["claims"]["claims"]])
    step.finish(metrics=claims_mod.as_metrics({"claims": [], "summary": totals}),
                artifacts=[args.html, args.csv, args.verdicts], outputs=[args.html, args.csv, args.verdicts])


if __name__ == "__main__":
    main()
