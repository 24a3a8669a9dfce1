"""The smoke profile of two papers through a real single-node SLURM cluster gives the local run's claims."""
from __future__ import annotations

import re

from conftest import BIN, copy_repo, run
from services import CLAIMS, PAPERS, slurm_cluster
from test_dvc import deterministic_claims

LIMIT_S = 900  # the whole SLURM run; killed hard after it (a status-check hang of the executor ignores SIGTERM)


def test_two_papers_through_slurm_give_the_local_claims(scale_smoke_repo, tmp_path):
    repo = copy_repo(tmp_path / "repo")
    with slurm_cluster(tmp_path / "slurm") as conf:
        done = run(["timeout", "-s", "KILL", str(LIMIT_S), str(BIN / "snakemake"), *CLAIMS, "--profile", "profiles/slurm",
                    "--config", "profile=smoke",
                    # poll fast: the defaults (first check after 40 s, then backing off) suit long jobs, not a test
                    "--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "2"],
                   repo, check=False)
        assert done.returncode not in (124, 137, -9), f"the SLURM run did not finish within {LIMIT_S} s"
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
        # a job starts by the main scheduler ("sched: Allocate") or by backfill ("sched/backfill: ... Started")
        started = re.findall(r"(?:sched: Allocate|sched/backfill: _start_job: Started) JobId=(\d+)",
                             (conf.parent / "slurmctld.log").read_text())
    # every job but the local rules (evaluate, plot) went through SLURM, each asking for its measured resources
    local = sum(1 for line in done.stderr.splitlines() if re.match(r"localrule \w+:", line))
    remote = sum(1 for line in done.stderr.splitlines() if re.match(r"rule \w+:", line))
    assert remote > 0 and len(set(started)) == remote, (remote, started)
    assert local > 0
    for paper in PAPERS:
        assert deterministic_claims(repo / f"results/{paper}/claims.json") == \
            deterministic_claims(scale_smoke_repo / f"results/{paper}/claims.json"), paper
