"""The claims registry: every claim's definition as registered, and every change since on the record.

    python -m workflow.tools.registry check          # exit 1 on a claim whose definition changed without an amendment
    python -m workflow.tools.registry stamp          # add `registered:` to claims that lack it (after committing them)
    python -m workflow.tools.registry draft [--write] # amendment entries for the changes git shows (then edit them)

A claim's *definition* is what decides its verdict: kind, units, gates, its control and nulls, and per check the
metric, comparator, threshold, margin, aggregate and units (DEFINITION). Statements, reasons and skips are not.
The registered version is the claim as it stood in claims.yaml at the commit `registered.commit` names; each
`amendments:` entry that changed the definition lists its changes as `changed: {path: [before, after]}` (paths as in
`flat()`: kind, units, checks.0.threshold, nulls.aa, ...). Applied in order to the registered version, they must
give today's definition: a change without an amendment (a threshold moved after the results) is refused. An entry
without `changed` records a change that these fields cannot show (a metric whose meaning changed under the same
name, a claim split off another, the decision rule of workflow/core/claims.py); one with `commit: before-history`
precedes the project's git history (recorded from the PAPER.md logs). Both are on the record and counted in the
headline; the check does not replay them.

Reads git (`git show <commit>:<claims.yaml>`); where the history is missing (a shallow clone), check says so.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

from workflow.core.params import ROOT

PAPERS_DIR = ROOT / "workflow" / "papers"
CHECK_FIELDS = ("metric", "op", "threshold", "margin", "aggregate", "units")
BEFORE_HISTORY = "before-history"


def flat(claim: dict) -> dict:
    """The claim's definition as {path: value}: what the verdict depends on, nothing else."""
    out = {"kind": claim.get("kind"), "units": claim.get("units", 1), "requires": claim.get("requires", []),
           "control": claim.get("control"), "no_control": True if "no_control" in claim else None}
    out |= {f"nulls.{role}": value for role, value in claim.get("nulls", {}).items()}
    for i, chk in enumerate(claim.get("checks", [])):
        out |= {f"checks.{i}.{key}": chk.get(key, "mean" if key == "aggregate" else None) for key in CHECK_FIELDS}
    return {k: v for k, v in out.items() if v is not None}


def git(*args: str, root: Path = ROOT) -> str | None:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def claims_at(commit: str, slug: str, root: Path = ROOT) -> dict[str, dict] | None:
    """{id: claim} of a paper's claims.yaml at a commit (None when git does not have it)."""
    text = git("show", f"{commit}:workflow/papers/{slug}/claims.yaml", root=root)
    if text is None:
        return None
    return {c["id"]: c for c in (yaml.safe_load(text) or {}).get("claims", [])}


def history(slug: str, root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(commit, date, subject) of every commit that changed the paper's claims.yaml, oldest first."""
    log = git("log", "--reverse", "--format=%h%x09%ad%x09%s", "--date=short", "--",
              f"workflow/papers/{slug}/claims.yaml", root=root) or ""
    return [tuple(line.split("\t", 2)) for line in log.splitlines() if line]


def replay(registered: dict, amendments: list[dict]) -> tuple[dict, list[str]]:
    """The registered definition with the amendments applied in order, and the amendments that do not fit it
    (an entry whose `before` is not what the definition held)."""
    state, problems = dict(registered), []
    for a in amendments:
        if a.get("commit") == BEFORE_HISTORY:
            continue
        for path, (before, after) in a.get("changed", {}).items():
            if state.get(path) != before:
                problems.append(f"amendment of {a['date']} says {path} was {before!r}, but it was {state.get(path)!r}")
            if after is None:
                state.pop(path, None)
            else:
                state[path] = after
    return state, problems


def differences(old: dict, new: dict) -> dict[str, list]:
    """{path: [old, new]} of every path whose value differs (None where absent)."""
    return {k: [old.get(k), new.get(k)] for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)}


def check_claim(slug: str, claim: dict, registered: dict | None) -> list[str]:
    """The problems of one claim against its registered definition (flat) and its amendments."""
    where = f"{slug} claim {claim['id']}"
    if "registered" not in claim:
        return [f"{where}: no `registered:` (run `python -m workflow.tools.registry stamp` once it is committed)"]
    if registered is None:
        return [f"{where}: registered at {claim['registered']['commit']}, which git does not have (or the claim is "
                "not in claims.yaml there)"]
    state, problems = replay(registered, claim.get("amendments", []))
    unlisted = differences(state, flat(claim))
    problems += [f"{path}: {old!r} -> {new!r} without an amendment" for path, (old, new) in unlisted.items()]
    return [f"{where}: {p}" for p in problems]


def check(slugs, root: Path = ROOT) -> list[str]:
    from workflow.core.claims import load

    out = []
    for slug in slugs:
        spec = load(root / "workflow" / "papers" / slug / "claims.yaml")
        cache: dict[str, dict | None] = {}
        for claim in spec["claims"]:
            commit = claim.get("registered", {}).get("commit")
            if commit and commit not in cache:
                cache[commit] = claims_at(commit, slug, root)
            then = (cache.get(commit) or {}).get(claim["id"]) if commit else None
            out += check_claim(slug, claim, flat(then) if then else None)
    return out


def first_commit(slug: str, cid: str, root: Path = ROOT) -> tuple[str, str] | None:
    """(commit, date) of the first commit whose claims.yaml has the claim."""
    for commit, date, _ in history(slug, root):
        if cid in (claims_at(commit, slug, root) or {}):
            return commit, date
    return None


def shown(value) -> str:
    return "none" if value is None else yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("\n...")


def described(changed: dict) -> str:
    """A change list in words: 'units: 5 -> 8; checks.1.threshold: none -> 0.9'."""
    return "; ".join(f"{path}: {shown(a)} -> {shown(b)}" for path, (a, b) in changed.items())


def draft(slug: str, root: Path = ROOT) -> dict[str, list[dict]]:
    """{claim id: amendment entries} for the definition changes git shows after each claim's registration, one
    per commit, with the commit's subject as a first `why` and `verdict: not recorded` (both to be edited)."""
    out: dict[str, list[dict]] = {}
    commits = history(slug, root)
    versions = [(c, d, s, claims_at(c, slug, root) or {}) for c, d, s in commits]
    for cid in (versions[-1][3] if versions else {}):
        prev = None
        for commit, date, subject, claims in versions:
            if cid not in claims:
                continue
            now = flat(claims[cid])
            if prev is not None and now != prev:
                changed = differences(prev, now)
                out.setdefault(cid, []).append({
                    "date": date, "commit": commit, "what": described(changed),
                    "changed": changed, "why": subject[:300], "verdict": "not recorded", "after_results": True})
            prev = now
    return out


def stamp(slug: str, root: Path = ROOT) -> int:
    """Add `registered: {commit, date}` after the `- id:` line of each claim that lacks it; returns how many."""
    path = root / "workflow" / "papers" / slug / "claims.yaml"
    lines, done = path.read_text().splitlines(keepends=True), 0
    from workflow.core.claims import load

    for claim in load(path)["claims"]:
        if "registered" in claim:
            continue
        found = first_commit(slug, claim["id"], root)
        if found is None:
            raise SystemExit(f"{slug} claim {claim['id']} is in no commit yet: commit claims.yaml, then stamp")
        i = next(k for k, line in enumerate(lines) if line.strip() == f"- id: {claim['id']}")
        indent = " " * (len(lines[i]) - len(lines[i].lstrip()) + 2)
        lines.insert(i + 1, f'{indent}registered: {{commit: "{found[0]}", date: "{found[1]}"}}\n')
        done += 1
    path.write_text("".join(lines))
    return done


def write_drafts(slug: str, root: Path = ROOT) -> int:
    """Insert draft()'s entries after the `registered:` line of each stamped claim that has no `amendments:` yet
    (one flow mapping per line, so that comments and layout stay); returns how many claims got them."""
    from workflow.core.claims import load

    path = root / "workflow" / "papers" / slug / "claims.yaml"
    lines, spec, drafts, done = path.read_text().splitlines(keepends=True), load(path), draft(slug, root), 0
    for claim in spec["claims"]:
        if "amendments" in claim or "registered" not in claim or not drafts.get(claim["id"]):
            continue
        i = next(k for k, line in enumerate(lines) if line.strip() == f"- id: {claim['id']}")
        j = next(k for k in range(i, len(lines)) if lines[k].lstrip().startswith("registered:"))
        indent = lines[j][:len(lines[j]) - len(lines[j].lstrip())]
        entries = [f"{indent}  - {yaml.safe_dump(e, default_flow_style=True, width=10**6, sort_keys=False).strip()}\n"
                   for e in drafts[claim["id"]]]
        lines[j + 1:j + 1] = [f"{indent}amendments:\n", *entries]
        done += 1
    path.write_text("".join(lines))
    return done


def main(argv=None) -> int:
    from workflow.papers import PAPERS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["check", "stamp", "draft"])
    parser.add_argument("papers", nargs="*", help="default: every paper")
    parser.add_argument("--write", action="store_true", help="draft: insert the entries into claims.yaml")
    args = parser.parse_args(argv)
    papers = args.papers or PAPERS
    if args.command == "check":
        problems = check(papers)
        print("\n".join(problems) or f"{len(papers)} papers: every claim matches its registered version and amendments")
        return 1 if problems else 0
    if args.command == "stamp":
        print(f"stamped {sum(stamp(p) for p in papers)} claims")
        return 0
    if args.write:
        print(f"amendments drafted for {sum(write_drafts(p) for p in papers)} claims: edit their why and verdict")
        return 0
    for paper in papers:
        for cid, entries in draft(paper).items():
            print(f"# {paper} {cid}\n" + yaml.safe_dump({"amendments": entries}, sort_keys=False, width=10_000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
