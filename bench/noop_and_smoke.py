"""Benchmark: no-op re-runs after a run, and the smoke profile's time and speed-up (prints figures; not a test).

    python bench/noop_and_smoke.py                # no-op figures in this project (after `make reproduce`)
    python bench/noop_and_smoke.py --repo DIR     # ... in another copy (e.g. a fresh clone that ran the default)
    python bench/noop_and_smoke.py --smoke        # also: the smoke profile of every paper in throw-away copies,
                                                  # with --cores 2 and --cores 1 (the speed-up)
    python bench/noop_and_smoke.py --zygote       # only: the smoke profile on 2 cores with and without the zygote

No-op figures (median of 3): `snakemake` (what a user types again: DAG, stamps, nothing to run), `snakemake -n`,
and `dvc status`, with the size of dvc.lock DVC parses each time. With bench/job_overhead.py and
bench/dag_scale.py these are the figures of the lean-DAG targets.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
REPEAT = 3


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "MLFLOW_DISABLE_TELEMETRY": "true", "HOME": str(Path.home())}
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t, (done.stdout + done.stderr).strip()


def noop(repo: Path) -> None:
    lock = repo / "dvc.lock"
    print(f"no-op re-runs in {repo} (median of {REPEAT}); dvc.lock: "
          f"{lock.stat().st_size / 1024:.0f} KB" if lock.exists() else "no dvc.lock (run `make reproduce` first)")
    for name, cmd in (("snakemake", ["snakemake", "--cores", "2"]), ("snakemake -n", ["snakemake", "-n", "-q"]),
                      ("dvc status", ["dvc", "status"])):
        runs = [timed(cmd, repo) for _ in range(REPEAT)]
        last = runs[-1][1].splitlines()[-1] if runs[-1][1] else ""
        print(f"  {name:14s} {statistics.median(t for t, _ in runs):6.2f} s   ({last[:80]})")


def smoke(cores: int, extra: tuple[str, ...] = ()) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        for name in filter(None, files.decode().split("\0")):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
        if (ROOT / "data" / "cache").is_dir():  # registry files, not part of what is timed
            shutil.copytree(ROOT / "data" / "cache", repo / "data" / "cache")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        seconds, out = timed(["snakemake", "--profile", "profiles/smoke", "--cores", str(cores), *extra], repo)
        if "steps (100%) done" not in out:
            raise SystemExit(f"the smoke run with --cores {cores} failed:\n{out[-3000:]}")
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--zygote", action="store_true",
                        help="instead of --smoke: the smoke profile on 2 cores with and without the zygote, side by side")
    args = parser.parse_args()
    if args.zygote:
        warm, cold = smoke(2), smoke(2, ("--config", "profile=smoke", "zygote=off"))
        print(f"smoke profile, every paper, --cores 2: {warm:.0f} s with the zygote, {cold:.0f} s without it")
        return
    noop(args.repo.resolve())
    if args.smoke:
        two, one = smoke(2), smoke(1)
        print(f"smoke profile, every paper: {two:.0f} s with --cores 2, {one:.0f} s with --cores 1: "
              f"speed-up {one / two:.2f}")


if __name__ == "__main__":
    main()
