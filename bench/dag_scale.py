"""Benchmark: the DAG at 10,000 jobs (prints figures; not a test).

    python bench/dag_scale.py [--datasets 2500]

In a throw-away copy of the project, a profile `scale` sweeps adam_implicit_bias over N GR and N Gauss data sets
(a data job and a train job per data set, each train job running its family's optimisers, plus gr0's batch-sweep
job, which claims C3 and C5 read: 4 N + 2 jobs, 10,002 for N = 2,500). It times, with Snakemake on 1 core:
  1. `snakemake -n` of the whole sweep (building the DAG);
  2. the evaluate job over all the runs (its command line does not grow with them: the step finds its inputs
     through the paper's plan module);
  3. for reference, `snakemake -n` of two bare Snakefiles (a data rule and a train rule of N * 2 jobs each, and one
     evaluate job), none of this project's code involved: what Snakemake itself costs per job.
     - `bare`: each rule with one input, output, log pair, benchmark, resources and a short shell command;
     - `bare, same files`: the same rules with our rules' files and parts, plain strings written out: the code and
       job stamp as an input (workflow/core/stamps.py: one per job), two outputs on data jobs, the wildcard
       constraints and a command line as long as ours. The difference between it and ours is what our Snakefile
       adds (input functions, stamps, validation); the difference between the two bare ones is what the number of
       files per job costs inside Snakemake.
The runs' files are not computed for every data set: the first data set of each family and its train job are
computed by the real steps and copied to every other name (this measures the DAG and the evaluate step, not the
optimisers), then `snakemake --touch` records them as made.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BARE = """N = {n}
NAMES = [f"{{family}}{{k}}" for family in ("gr", "gauss") for k in range(N)]

rule all:
    input: "claims.json"

rule data:
    input: "params.yaml"
    output: "data/{{name}}.npz"
    log: out="logs/data/{{name}}.log", run="logs/data/{{name}}.run.json"
    benchmark: "bench/data/{{name}}.tsv"
    threads: 1
    resources: mem_mb=512, runtime=5
    shell: "python -m step data {{wildcards.name}} --out {{output:q}} --log {{log.out:q}} --record {{log.run:q}}"

rule train:
    input: data="data/{{name}}.npz", params="params.yaml"
    output: "train/{{name}}.npz"
    log: out="logs/train/{{name}}.log", run="logs/train/{{name}}.run.json"
    benchmark: "bench/train/{{name}}.tsv"
    threads: 1
    resources: mem_mb=512, runtime=5
    shell: "python -m step train {{wildcards.name}} --data {{input.data:q}} --out {{output:q}} --log {{log.out:q}}"

rule evaluate:
    input: expand("train/{{name}}.npz", name=NAMES)
    output: "claims.json"
    shell: "python -m step evaluate --out {{output:q}}"
"""
BARE_SAME_FILES = """N = {n}
NAMES = [f"{{family}}{{k}}" for family in ("gr", "gauss") for k in range(N)]
STAMPS = ".cache/stamps"
FLAGS = "--profile scale --params {{input.stamp}} --rule {{rule}} --wildcards '{{wildcards}}' --log {{log.out:q}} --record {{log.run:q}}"

rule all:
    input: "results/claims.json"

rule data:
    input:
        stamp=f"{{STAMPS}}/workflow.papers.adam_implicit_bias.data",
    output: data="results/data/{{dataset}}.npz", summary="results/data/{{dataset}}.json"
    wildcard_constraints: dataset="(?:gr|gauss)[0-9]+"
    log: out="results/logs/data/{{dataset}}.log", run="results/logs/data/{{dataset}}.run.json"
    benchmark: "results/bench/data/{{dataset}}.tsv"
    threads: 1
    resources: mem_mb=512, runtime=5
    shell: "bin/python -m workflow.run papers.adam_implicit_bias.data {{wildcards.dataset}} --out {{output.data:q}} --summary {{output.summary:q}} " + FLAGS

rule train:
    input:
        data="results/data/{{dataset}}.npz",
        stamp=f"{{STAMPS}}/workflow.papers.adam_implicit_bias.train",
    output: "results/train/{{dataset}}/{{group}}.npz"
    wildcard_constraints: dataset="(?:gr|gauss)[0-9]+", group="family|sweep"
    log: out="results/logs/train/{{dataset}}/{{group}}.log", run="results/logs/train/{{dataset}}/{{group}}.run.json"
    benchmark: "results/bench/train/{{dataset}}/{{group}}.tsv"
    threads: 1
    resources: mem_mb=512, runtime=5
    shell: "bin/python -m workflow.run papers.adam_implicit_bias.train {{wildcards.dataset}} --group {{wildcards.group}} --data {{input.data:q}} --out {{output:q}} " + FLAGS

rule evaluate:
    input: expand("results/train/{{name}}/family.npz", name=NAMES), "results/train/gr0/sweep.npz"
    output: "results/claims.json"
    shell: "python -m step evaluate --out {{output:q}}"
"""
PROFILE = """adam_implicit_bias:
  datasets: {{gr: {n}, gauss: {n}, batch_sweep: 1}}
  train: {{steps: 200, record_points: 5}}
"""


def sh(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t = time.perf_counter()
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")  # the jobs' `python` is the project's
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - t, done.stdout


def copy_project(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def seed_outputs(repo: Path, n: int) -> None:
    """The real data and train steps once per family, copied to every other job's paths."""
    snake = [str(BIN / "snakemake"), "--profile", "profiles/scale", "--cores", "2"]
    sh(snake + [f"results/adam_implicit_bias/train/{fam}0/family.npz" for fam in ("gr", "gauss")]
       + ["results/adam_implicit_bias/train/gr0/sweep.npz"], repo)  # gr0 alone runs the batch sweep (C3, C5)
    out = repo / "results/adam_implicit_bias"
    for fam in ("gr", "gauss"):
        for k in range(1, n):
            for suffix in (".npz", ".json"):
                shutil.copy2(out / f"data/{fam}0{suffix}", out / f"data/{fam}{k}{suffix}")
            (out / f"train/{fam}{k}").mkdir(parents=True, exist_ok=True)
            shutil.copy2(out / f"train/{fam}0/family.npz", out / f"train/{fam}{k}/family.npz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=2500, help="N: GR and Gauss data sets each")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from workflow.core.params import load
    from workflow.papers.adam_implicit_bias import plan

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        copy_project(repo)
        (repo / "profiles/scale").mkdir()
        (repo / "profiles/scale/params.yaml").write_text(PROFILE.format(n=args.datasets))
        (repo / "profiles/scale/config.yaml").write_text("cores: 1\nconfig:\n  profile: scale\n")
        snake = [str(BIN / "snakemake"), "--profile", "profiles/scale"]
        target = ["results/adam_implicit_bias/claims.json"]
        p = load("scale", repo)["adam_implicit_bias"]
        jobs = len(plan.datasets(p)) + len(plan.train_jobs(p)) + 1  # data jobs, train jobs, evaluate
        quiet = snake + target + ["-n", "--forceall", "--quiet", "all"]  # --quiet last: it takes a list
        sh(quiet, repo)  # a first run writes the job stamps and byte-compiles: not timed
        seconds, _ = sh(quiet, repo)
        ours = seconds
        print(f"snakemake -n --quiet, {jobs} jobs: {seconds:.1f} s ({1000 * seconds / jobs:.2f} ms per job)")
        seconds, _ = sh(snake + ["-n", "--forceall"] + target, repo)  # as a user previews it: every job printed
        print(f"snakemake -n (printing every job): {seconds:.1f} s")
        bare = repo / "bare"
        bare.mkdir()
        (bare / "Snakefile").write_text(BARE.format(n=args.datasets))
        (bare / "params.yaml").write_text("{}\n")
        bare_quiet = [str(BIN / "snakemake"), "--cores", "1", "-n", "--forceall", "--quiet", "all"]
        sh(bare_quiet, bare)
        seconds, _ = sh(bare_quiet, bare)
        print(f"the same shape in a bare Snakefile (Snakemake alone), -n --quiet: {seconds:.1f} s "
              f"({1000 * seconds / (4 * args.datasets + 1):.2f} ms per job)")
        same = repo / "bare_same_files"
        (same / ".cache/stamps").mkdir(parents=True)
        for step in ("data", "train"):
            (same / f".cache/stamps/workflow.papers.adam_implicit_bias.{step}").write_text("{}\n")
        (same / "Snakefile").write_text(BARE_SAME_FILES.format(n=args.datasets))
        sh(bare_quiet, same)
        bare_same, _ = sh(bare_quiet, same)
        bare_jobs, same_jobs = 4 * args.datasets + 1, 4 * args.datasets + 2
        per_job = {name: 1000 * t / n for name, t, n in (("ours", ours, jobs), ("bare", seconds, bare_jobs),
                                                          ("same", bare_same, same_jobs))}
        print(f"the same shape with our rules' files and parts in a bare Snakefile, -n --quiet: {bare_same:.1f} s "
              f"({per_job['same']:.2f} ms per job)")
        # per job: our DAG also has the placebo group's train jobs (adam_implicit_bias C1-C4), the bare ones not
        print(f"per job, ours / bare = {per_job['ours'] / per_job['bare']:.2f}, "
              f"ours / bare with the same files = {per_job['ours'] / per_job['same']:.2f}")
        seed_outputs(repo, args.datasets)
        sh(snake + target + ["--touch", "--until", "adam_implicit_bias_train"], repo)  # targets first: --until takes a list
        seconds, out = sh(snake + ["--cores", "1"] + target, repo)
        runs = len(plan.run_files(p))
        print(f"evaluate over {runs} runs, through snakemake: {seconds:.1f} s")


if __name__ == "__main__":
    main()
