"""Benchmark: the DAG at 10,000 jobs (prints figures; not a test).

    python bench/dag_scale.py [--datasets 840]

In a throw-away copy of the project, a profile `scale` sweeps adam_implicit_bias over N GR and N Gauss data sets
(5 optimisers each: 10 N + 2 N jobs, 10,080 for N = 840). It times, with Snakemake on 1 core:
  1. `snakemake -n` of the whole sweep (building the DAG);
  2. the evaluate job over all 8,400 runs (its command line does not grow with them: the step finds its inputs
     through the paper's plan module).
The runs' files are not computed 8,400 times: one data set and one run per optimiser are computed by the real
steps and copied to every other name (this measures the DAG and the evaluate step, not the optimisers), then
`snakemake --touch` records them as made.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PROFILE = """adam_implicit_bias:
  datasets: {{gr: {n}, gauss: {n}, batch_sweep: 0}}
  train: {{steps: 200, record_points: 5}}
"""


def sh(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
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


def seed_outputs(repo: Path, n: int, plan: dict) -> None:
    """The real data and train steps once per family and optimiser, copied to every other job's paths."""
    snake = [str(BIN / "snakemake"), "--profile", "profiles/scale", "--cores", "2"]
    firsts = [f"results/adam_implicit_bias/train/{fam}0/{algo}.npz" for fam in ("gr", "gauss") for algo in plan[fam]]
    sh(snake + firsts, repo)
    out = repo / "results/adam_implicit_bias"
    for fam in ("gr", "gauss"):
        for k in range(1, n):
            for suffix in (".npz", ".json"):
                shutil.copy2(out / f"data/{fam}0{suffix}", out / f"data/{fam}{k}{suffix}")
            (out / f"train/{fam}{k}").mkdir(parents=True, exist_ok=True)
            for algo in plan[fam]:
                shutil.copy2(out / f"train/{fam}0/{algo}.npz", out / f"train/{fam}{k}/{algo}.npz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=840, help="N: GR and Gauss data sets each")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from workflow.core.params import load

    plan = load("default")["adam_implicit_bias"]["plan"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        copy_project(repo)
        (repo / "profiles/scale").mkdir()
        (repo / "profiles/scale/params.yaml").write_text(PROFILE.format(n=args.datasets))
        (repo / "profiles/scale/config.yaml").write_text("cores: 1\nconfig:\n  profile: scale\n")
        snake = [str(BIN / "snakemake"), "--profile", "profiles/scale"]
        target = ["results/adam_implicit_bias/claims.json"]
        seconds, out = sh(snake + ["-n", "--forceall"] + target, repo)
        jobs = int(next(line.split()[-1] for line in out.splitlines() if line.startswith("total")))
        print(f"snakemake -n, {jobs} jobs: {seconds:.1f} s ({1000 * seconds / jobs:.2f} ms per job)")
        seed_outputs(repo, args.datasets, plan)
        sh(snake + ["--touch", "--allowed-rules", "adam_implicit_bias_data", "adam_implicit_bias_train"] + target, repo)
        seconds, out = sh(snake + ["--cores", "1"] + target, repo)
        runs = 5 * 2 * args.datasets
        print(f"evaluate over {runs} runs, through snakemake: {seconds:.1f} s")


if __name__ == "__main__":
    main()
