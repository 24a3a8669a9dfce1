"""Two track jobs in parallel against a real `mlflow server` on PostgreSQL: every run in its paper's experiment,
none duplicated, none in Default; `make track-sync` against the server then changes nothing it had."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import BIN, ROOT, env, run
from services import PAPERS, free_port

from workflow.tools import server


@pytest.fixture
def tracking_server(tmp_path, monkeypatch):
    """A server of its own in a folder under /tmp (as root, PostgreSQL runs as user postgres and cannot enter
    pytest's private tmp_path); its passwords in a config folder of its own, not the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = Path(tempfile.mkdtemp(prefix="mlflow-server-"))
    try:
        with server.mlflow_server(folder, free_port(), free_port()) as url:
            yield url
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def runs_by_experiment(url: str) -> dict[str, list]:
    from mlflow.tracking import MlflowClient

    c = MlflowClient(url)
    return {e.name: c.search_runs([e.experiment_id], max_results=5000) for e in c.search_experiments()}


def record_ids(repo: Path, paper: str) -> set[str]:
    return {json.loads(p.read_text())["record_id"] for p in (repo / "results" / paper / "logs").glob("**/*.run.json")}


def test_parallel_track_jobs_and_track_sync_against_a_postgres_server(scale_smoke_repo, tmp_path, tracking_server):
    repo = tmp_path / "repo"
    shutil.copytree(scale_smoke_repo, repo, symlinks=True)
    (repo / ".venv").symlink_to(ROOT / ".venv")  # for `make track-sync`
    for paper in PAPERS:  # the track jobs run again, this time against the server
        (repo / f"results/{paper}/tracking.json").unlink()
    to_server = dict(env(), MLFLOW_TRACKING_URI=tracking_server)
    tracked = [f"results/{paper}/tracking.json" for paper in PAPERS]
    done = run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "--cores", "2", *tracked], repo, env=to_server)
    assert f"{len(PAPERS)} of {len(PAPERS)} steps" in done.stderr, done.stderr[-3000:]  # track jobs only
    assert all(json.loads((repo / t).read_text())["untracked"] == 0 for t in tracked)

    runs = runs_by_experiment(tracking_server)
    assert not runs.get("Default"), "runs landed in the Default experiment"
    for paper in (*PAPERS, "data"):  # each track job also logs the shared fetch jobs' records (experiment `data`)
        ids = [r.data.tags["record_id"] for r in runs[paper]]
        assert len(ids) == len(set(ids)), f"{paper}: duplicated runs"
        assert set(ids) == record_ids(repo, paper), paper
        assert all(r.info.status == "FINISHED" for r in runs[paper])
    # the paper's claims are one run, named evaluate, whose tags carry each claim's verdict
    for paper in PAPERS:
        claims = json.loads((repo / f"results/{paper}/claims.json").read_text())["claims"]
        evaluate = [r for r in runs[paper] if r.data.tags.get("mlflow.runName") == "evaluate"]
        assert len(evaluate) == 1 and all(evaluate[0].data.tags[f"claim.{c['id']}"] == c["verdict"] for c in claims)

    # make track-sync logs the other papers' records and leaves the runs it had as they were
    before = {paper: {r.info.run_id for r in runs[paper]} for paper in (*PAPERS, "data")}
    sync = run(["make", "track-sync"], repo, env=to_server)
    assert "0 incomplete runs replaced, 0 duplicates removed" in sync.stdout, sync.stdout
    after = runs_by_experiment(tracking_server)
    assert {paper: {r.info.run_id for r in after[paper]} for paper in before} == before
    papers = sorted(p.name for p in (repo / "results").iterdir() if (p / "logs").is_dir())
    assert all(len(after[p]) == len(record_ids(repo, p)) for p in papers)
    again = run(["make", "track-sync"], repo, env=to_server).stdout
    assert " 0 newly logged" in again, again
    assert not os.path.exists(repo / ".cache/tracking-unreachable")
