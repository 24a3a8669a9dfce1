"""Generate dvc.yaml from the Snakemake DAG: one entry per rule, a `foreach` over its jobs; same commands, deps (stamps included), outs.

    python -m workflow.tools.dvcgen                    # rewrite dvc.yaml (default profile)
    python -m workflow.tools.dvcgen --check            # exit 1 if the committed dvc.yaml is stale
    python -m workflow.tools.dvcgen --profile smoke --out dvc.yaml   # what the end-to-end test runs

Policy (README, "DVC and Snakemake"): Snakemake is the engine; DVC is a second runner with the lock, params and
metrics. The files live in results/ and data/raw/ (git-ignored) for both tools and DVC records their hashes in
dvc.lock; data sets and trained models are also put in DVC's cache (`cache: true`, shared()), so that `dvc push`
and `dvc pull` share them through a remote. After a Snakemake run, `dvc commit -f --no-relink` records the state
(`make reproduce` does it; a relink would rewrite the cached files with new mtimes, and Snakemake would re-run
what was made from them); after a `dvc repro` or a `dvc pull`, `snakemake --touch` tells Snakemake the outputs
are current.

This uses Snakemake's private DAG API (pinned in requirements.txt); tests/test_dvc.py fails when the output
changes, so an upgrade that breaks it is caught.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import yaml

from workflow.core import stamps
from workflow.core.params import ROOT
from workflow.core.records import read_record

HEADER = ("# GENERATED from the Snakemake DAG by `python -m workflow.tools.dvcgen` (make dvc.yaml). Never edit by hand:\n"
          "# change the rules/ or params.yaml and regenerate. tests/test_dvc.py fails when this file is stale.\n"
          "# One entry per Snakemake rule, a foreach over its jobs: `dvc repro cosa_tta` runs the rule's jobs,\n"
          "# `dvc repro cosa_tta@co2-dlinear-13-0` one of them. The first stage stops with the fix when a knob\n"
          "# adds or removes jobs (then run `make dvc.yaml`).\n")


def snakemake_jobs(profile: str, root: Path = ROOT) -> list:
    """Every job of the full DAG (as if nothing existed), in a stable order."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        wf_api = api.workflow(resource_settings=ResourceSettings(cores=1),
                              config_settings=ConfigSettings(config={"profile": profile}),
                              snakefile=root / "Snakefile", workdir=root)
        dag_api = wf_api.dag(dag_settings=DAGSettings(targets={"all"}))
        workflow = dag_api.workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        workflow._build_dag()
        # Stage order: rules as the rule files define them (a paper's data -> ... -> plot), then wildcards.
        # (toposorted() levels are not stable between runs; DVC derives its own DAG from deps and outs anyway.)
        rule_order = {rule.name: i for i, rule in enumerate(workflow.rules)}
        jobs = sorted(workflow.dag.jobs, key=lambda j: (rule_order[j.rule.name], sorted(j.wildcards_dict.items())))
        return [{"rule": job.rule.name, "wildcards": dict(job.wildcards_dict), "input": list(map(str, job.input)),
                 "output": list(map(str, job.output)), "log": list(map(str, job.log)), "shellcmd": job.shellcmd} for job in jobs if job.shellcmd]


def item_key(job: dict) -> str:
    """A job's name within its rule's foreach (dvc repro RULE@KEY): its wildcard values."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(str(v) for v in job["wildcards"].values()))


def output_kind(path: str) -> str:
    return "metrics" if path.endswith("claims.json") else "plots" if path.endswith(".png") else "outs"


def shared(path: str) -> bool:
    """Data sets and trained models go to DVC's cache (and so to a remote, `dvc push`): what a lab shares instead
    of re-running. The rest (per-run results, tables, figures) is small and re-made from them in minutes."""
    return path.startswith("data/raw/") or "/data/" in path or "/base/" in path or path.endswith(".pt")


RUNNER = "bin/python -m workflow.run "  # every step job's command (rules/common.smk: step)


def stage(job: dict) -> dict:
    """One job as a dvc.yaml stage: its command and its inputs, stamps included, exactly as Snakemake sees them: DVC
    then re-runs a stage for the same reasons Snakemake does. DVC makes no folders: a step job's runner
    (workflow/run.py) makes its log's, any other command gets a `mkdir -p` first."""
    cmd = " ".join(job["shellcmd"].split())  # Snakemake's formatting leaves line breaks/indents
    log_dirs = [] if cmd.startswith(RUNNER) else sorted({str(Path(p).parent) for p in job["log"]})
    st = {"cmd": f"mkdir -p {' '.join(log_dirs)} && {cmd}" if log_dirs else cmd, "deps": sorted(set(job["input"]))}
    for out in job["output"]:  # claims are DVC metrics, figures DVC plots, the rest plain outs
        st.setdefault(output_kind(out), []).append({out: {"cache": shared(out)}})
    return st


def substitute(text: str, wildcards: dict) -> str:
    """`text` with each wildcard value written ${item.NAME} where it stands alone (a number not inside another
    number, a word not inside another word); longest values first, so that 13 is not read inside 130."""
    for name, value in sorted(wildcards.items(), key=lambda kv: -len(str(kv[1]))):
        value = str(value)
        if value.replace(".", "").isdigit():  # a number: not inside another number (1 in 13 or in 0.1)
            pattern = rf"(?<![0-9])(?<![0-9]\.){re.escape(value)}(?![0-9])(?!\.[0-9])"
        else:
            pattern = rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])"
        text = re.sub(pattern, "${item." + name + "}", text)
    return text


def render(template: str, wildcards: dict) -> str:
    return re.sub(r"\$\{item\.(\w+)\}", lambda m: str(wildcards[m.group(1)]), template)


def template_of(values: list[str], jobs: list[dict]) -> str | None:
    """One template that renders to every job's value (None if the jobs differ in more than their wildcards)."""
    candidate = substitute(values[0], jobs[0]["wildcards"])
    return candidate if all(render(candidate, j["wildcards"]) == v for v, j in zip(values, jobs)) else None


def field(jobs: list[dict], values: list[str], items: dict, name: str) -> str:
    """A string field of the rule's entry: a template over the wildcards, or, where the jobs differ otherwise,
    the job's own value carried in its item (`${item.NAME}`)."""
    template = template_of(values, jobs)
    if template is not None:
        return template
    for job, value in zip(jobs, values):
        items[item_key(job)][name] = value
    return "${item." + name + "}"


def list_field(jobs: list[dict], lists: list[list[str]], items: dict, name: str) -> list[str]:
    """A list field (deps, params) of the rule's entry: the templates every job has, then, where jobs differ,
    per-job entries carried in the items (`${item.dep0}`, ...). A job with fewer of those repeats one of its
    own entries (DVC accepts a dependency listed twice), so every item has the same fields."""
    candidates = {substitute(v, jobs[0]["wildcards"]) for v in lists[0]}
    common = sorted(t for t in candidates if all(render(t, j["wildcards"]) in values for j, values in zip(jobs, lists)))
    rest = [[v for v in values if v not in {render(t, j["wildcards"]) for t in common}] for j, values in zip(jobs, lists)]
    width = max(map(len, rest))
    for job, own, values in zip(jobs, rest, lists):
        filler = own or values
        for i in range(width):
            items[item_key(job)][f"{name}{i}"] = (own + filler[-1:] * width)[i]
    return common + ["${item." + f"{name}{i}" + "}" for i in range(width)]


def rule_entry(jobs: list[dict], stages: list[dict]) -> dict:
    """One dvc.yaml entry per rule: `foreach` over its jobs (keyed by wildcard values), `do` the common stage."""
    if len(jobs) == 1 and not jobs[0]["wildcards"]:
        return stages[0]
    items = {item_key(j): {k: str(v) for k, v in j["wildcards"].items()} for j in jobs}
    do = {"cmd": field(jobs, [s["cmd"] for s in stages], items, "cmd")}
    do["deps"] = list_field(jobs, [s["deps"] for s in stages], items, "dep")
    for kind in ("outs", "metrics", "plots"):
        if kind in stages[0]:
            paths = [[next(iter(o)) for o in s[kind]] for s in stages]
            do[kind] = [{field(jobs, [p[i] for p in paths], items, f"{kind[:-1]}{i}"): {"cache": shared(paths[0][i])}}
                        for i in range(len(paths[0]))]
    return {"foreach": items, "do": do}


SHAPE_FILE = "results/dvc_dag_shape.txt"


def shape(jobs: list[dict]) -> str:
    """A fingerprint of the DAG's shape: which jobs exist (rule and wildcards), not what they run."""
    names = sorted(f"{j['rule']}|{sorted(j['wildcards'].items())}" for j in jobs)
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def shape_check(profile: str, fingerprint: str) -> dict:
    """The first stage builds the DAG as Snakemake does, which writes the stamps every other stage depends on
    (.cache/stamps: the code and params values each job reads), and stops with the fix when a knob adds or removes
    jobs (a list of seeds, of horizons): dvc.yaml lists the jobs of one DAG shape and must never run stale.

    params.yaml is read once, here, as a whole (so `dvc params diff` and `dvc exp show` see every knob); the
    stages read their values' stamps. (Listing each stage's keys made DVC parse params.yaml once per stage:
    `dvc status` took 45 s at 350 stages.)"""
    overlay = [f"profiles/{profile}/params.yaml"] if profile != "default" else []
    return {"cmd": f"bin/python -m workflow.tools.dvcgen --profile {profile} --expect-shape {fingerprint} --shape-out {SHAPE_FILE}",
            "deps": ["Snakefile", "rules", "workflow", *overlay], "params": [{"params.yaml": None}],
            "outs": [{SHAPE_FILE: {"cache": False}}, {stamps.STAMPS: {"cache": False, "persist": True}}]}


def generate(profile: str = "default", root: Path = ROOT) -> str:
    jobs = snakemake_jobs(profile, root)
    if not any(job["rule"] == "report" for job in jobs):  # Snakemake only logs a DAG error here; never write it
        raise SystemExit("the Snakemake DAG could not be built (no report job): run `snakemake -n` to see why")
    by_rule: dict[str, list] = {}
    for job in jobs:
        by_rule.setdefault(job["rule"], []).append(job)
    entries = {"dag_shape": shape_check(profile, shape(jobs))}
    for rule, js in by_rule.items():  # every job reads its stamp: DVC runs dag_shape, which writes it, first
        entries[rule] = rule_entry(js, [stage(j) for j in js])
    return HEADER + yaml.safe_dump({"stages": entries}, sort_keys=False, width=10_000)


def other_profile_outputs(jobs: list[dict], profile: str, root: Path = ROOT) -> dict[str, list[str]]:
    """{profile: [run records]} of the jobs whose outputs on disk were made under another profile than dvc.yaml's.
    `dvc commit` after a smoke run would record smoke outputs as the default stages' (and `dvc repro` then skip
    them): the first stage refuses, so the README's `dvc repro dag_shape && dvc commit` never gets there."""
    found: dict[str, list[str]] = {}
    for job in jobs:
        for log in job["log"]:
            record = read_record(root / log) if log.endswith(".run.json") else None
            if record is not None and record.get("profile") != profile:
                found.setdefault(str(record.get("profile")), []).append(log)
    return found


def expect_shape(profile: str, fingerprint: str, out: Path) -> int:
    jobs = snakemake_jobs(profile)
    found = shape(jobs)
    if found != fingerprint:
        print(f"dvc.yaml is stale: params.yaml or the rules now give a DAG with other jobs (shape {found}, dvc.yaml "
              f"was generated for {fingerprint}). Run `make dvc.yaml` (python -m workflow.tools.dvcgen"
              f"{'' if profile == 'default' else ' --profile ' + profile}), then `dvc repro` again.", file=sys.stderr)
        return 1
    others = other_profile_outputs(jobs, profile)
    if others:
        made = "; ".join(f"{len(logs)} under the {name} profile (e.g. {logs[0]})" for name, logs in sorted(others.items()))
        print(f"results/ holds outputs of another profile than this dvc.yaml's ({profile}): {made}. DVC would record "
              f"them as the {profile} profile's. Run the {profile} profile first (`snakemake --cores 2"
              f"{'' if profile == 'default' else ' --profile profiles/' + profile}` re-makes them), then `dvc repro "
              "dag_shape && dvc commit --force --no-relink`.", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(fingerprint + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--out", type=Path, default=ROOT / "dvc.yaml")
    parser.add_argument("--check", action="store_true", help="only compare with the existing file")
    parser.add_argument("--expect-shape", help="(dvc.yaml's first stage) fail unless the DAG still has this shape")
    parser.add_argument("--shape-out", type=Path, default=ROOT / SHAPE_FILE)
    args = parser.parse_args(argv)
    if args.expect_shape:
        return expect_shape(args.profile, args.expect_shape, args.shape_out)
    text = generate(args.profile)
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run `make dvc.yaml` and commit it", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out} ({text.count(chr(10) + '  ') } lines of stages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
