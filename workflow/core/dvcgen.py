"""Generate dvc.yaml from the Snakemake DAG: one DVC stage per Snakemake job, same command, deps, params, outs.

    python -m workflow.core.dvcgen                    # rewrite dvc.yaml (default profile)
    python -m workflow.core.dvcgen --check            # exit 1 if the committed dvc.yaml is stale
    python -m workflow.core.dvcgen --profile smoke --out dvc.yaml   # what the end-to-end test runs

Policy (README, "DVC and Snakemake"): Snakemake is the engine; DVC is a second runner with the lock, params and
metrics. Outputs are `cache: false` - the files live in results/ (git-ignored) for both tools, and DVC records
their hashes in dvc.lock. After a Snakemake run, `dvc commit -f` records the state (`make reproduce` does it);
after a `dvc repro`, `snakemake --touch` tells Snakemake the outputs are current.

This uses Snakemake's private DAG API (pinned in requirements.txt); tests/test_dvc.py fails when the output
changes, so an upgrade that breaks it is caught.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from .params import ROOT, leaf_keys, load, section

HEADER = ("# GENERATED from the Snakemake DAG by `python -m workflow.core.dvcgen` (make dvc.yaml). Never edit by hand:\n"
          "# change the rules/ or params.yaml and regenerate. tests/test_dvc.py fails when this file is stale.\n")


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
                 "output": list(map(str, job.output)), "log": list(map(str, job.log)), "params": dict(job.params),
                 "shellcmd": job.shellcmd} for job in jobs if job.shellcmd]


def stage_name(job: dict) -> str:
    parts = [job["rule"]] + [str(v) for v in job["wildcards"].values()]
    return re.sub(r"[^A-Za-z0-9_-]", "_", "-".join(parts))


def output_kind(path: str) -> str:
    return "metrics" if path.endswith("claims.json") else "plots" if path.endswith(".png") else "outs"


def stage(job: dict, params: dict, profile: str) -> dict:
    """One dvc.yaml stage: the job's command (log folders made first: DVC does not create them)."""
    log_dirs = sorted({str(Path(p).parent) for p in job["log"]})
    cmd = " ".join(job["shellcmd"].split())  # Snakemake's formatting leaves line breaks/indents
    sections = [s for s in job["params"].get("sections", "").split(",") if s]
    keys = sorted(k for s in sections for k in leaf_keys(section(params, s), s))
    st = {"cmd": f"mkdir -p {' '.join(log_dirs)} && {cmd}" if log_dirs else cmd, "deps": sorted(set(job["input"]))}
    if profile != "default":  # DVC tracks params.yaml keys; a profile's overlay file is a dependency as a whole
        st["deps"].append(f"profiles/{profile}/params.yaml")
    if keys:
        st["params"] = keys
    for out in job["output"]:  # claims are DVC metrics, figures DVC plots, the rest plain outs; all uncached
        st.setdefault(output_kind(out), []).append({out: {"cache": False}})
    return st


def generate(profile: str = "default", root: Path = ROOT) -> str:
    params = load(profile, root)
    jobs = snakemake_jobs(profile, root)
    if not any(job["rule"] == "report" for job in jobs):  # Snakemake only logs a DAG error here; never write it
        raise SystemExit("the Snakemake DAG could not be built (no report job): run `snakemake -n` to see why")
    stages = {stage_name(job): stage(job, params, profile) for job in jobs}
    return HEADER + yaml.safe_dump({"stages": stages}, sort_keys=False, width=10_000)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--out", type=Path, default=ROOT / "dvc.yaml")
    parser.add_argument("--check", action="store_true", help="only compare with the existing file")
    args = parser.parse_args(argv)
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
