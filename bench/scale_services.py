"""Benchmark: how long each service of `make test-scale` takes to come up, and two papers' smoke profile run
locally and through SLURM (prints figures; as root, after `make test-scale` installed SLURM).

    python bench/scale_services.py

The SLURM run polls every 2 s, as the test does; the cluster has the machine's cores, like the local run.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "scale")]

from conftest import BIN, copy_repo, env  # noqa: E402
from services import CLAIMS, s3_server, slurm_cluster  # noqa: E402

from workflow.tools import server  # noqa: E402


def seconds(start: float) -> str:
    return f"{time.monotonic() - start:.1f} s"


def smoke(repo: Path, *extra: str) -> float:
    start = time.monotonic()
    subprocess.run([str(BIN / "snakemake"), *CLAIMS, *extra, "--config", "profile=smoke"], cwd=repo, env=env(),
                   check=True, capture_output=True)
    return time.monotonic() - start


def main() -> None:
    cores = str(os.cpu_count())
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        tmp = Path(tmp)
        os.chmod(tmp, 0o755)  # PostgreSQL runs as user postgres
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")  # the servers' passwords go with their clusters
        start = time.monotonic()
        with server.postgres(tmp / "pg", 5499):
            print(f"PostgreSQL (initdb, start, createdb)   {seconds(start)}")
        for attempt in ("first start", "second start"):
            start = time.monotonic()
            with server.mlflow_server(tmp / "server", 5498, 5497):
                print(f"PostgreSQL + MLflow server, {attempt}  {seconds(start)}")
        start = time.monotonic()
        with s3_server(tmp, "bench"):
            print(f"moto S3 server with a bucket           {seconds(start)}")

        local = smoke(copy_repo(tmp / "local"), "--cores", cores)
        repo = copy_repo(tmp / "slurm")
        start = time.monotonic()
        with slurm_cluster(tmp / "cluster"):
            print(f"single-node SLURM (munge, slurmctld, slurmd) idle  {seconds(start)}")
            remote = smoke(repo, "--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "2",
                           "--seconds-between-status-checks", "2")
        print(f"smoke profile of {', '.join(c.split('/')[1] for c in CLAIMS)}: local {local:.0f} s "
              f"(--cores {cores}), through SLURM {remote:.0f} s ({remote / local:.2f}x)")


if __name__ == "__main__":
    main()
