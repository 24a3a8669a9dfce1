"""Data sets and trained models round-trip through a DVC S3 remote (moto's S3 server on loopback): pushed, deleted
here, pulled back, and both DVC and Snakemake find the workspace current."""
from __future__ import annotations

import shutil

import yaml

from conftest import BIN, SCALE_OTHER_PAPER, env, run
from services import PAPERS, S3_ENV, s3_server

from workflow.tools.dvcgen import shared


def test_push_delete_pull_leaves_dvc_and_snakemake_with_nothing_to_do(scale_smoke_repo, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(scale_smoke_repo, repo, symlinks=True)
    dvc = lambda *args, **kw: run([str(BIN / "dvc"), *args], repo, env=s3_env, **kw)  # noqa: E731
    s3_env = env() | S3_ENV
    # the state `make reproduce` leaves: dvc.yaml of the run's profile, every stage committed (every stage of the
    # papers this session ran: the plot stages and all they depend on)
    papers = (*PAPERS, SCALE_OTHER_PAPER)
    stages = [f"{paper}_plot" for paper in papers]
    run(["python", "-m", "workflow.tools.dvcgen", "--profile", "smoke"], repo)
    dvc("repro", "--quiet", "dag_shape")
    dvc("commit", "--force", "--no-relink", "--quiet", "--with-deps", *stages)
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    outs = sorted({o["path"] for st in lock.values() for o in st.get("outs", []) if shared(o["path"])})
    assert any(o.endswith(".pt") for o in outs) and any(o.startswith("data/raw/") for o in outs), outs

    with s3_server(tmp_path, "lab-artifacts") as endpoint:
        # the README's commands for a user's bucket, plus the endpoint of this test's server
        dvc("remote", "add", "-d", "lab", "s3://lab-artifacts/iclr2026-repro")
        dvc("remote", "modify", "lab", "endpointurl", endpoint)
        pushed = dvc("push", "--with-deps", *stages).stdout
        assert f"{len(outs)} file" in pushed or "files pushed" in pushed, pushed

        for out in outs:  # gone from the workspace and from the cache: only the remote has them
            (repo / out).unlink()
        shutil.rmtree(repo / ".dvc/cache")
        assert "deleted" in dvc("status", "--with-deps", *stages).stdout

        dvc("pull", "--with-deps", *stages)
        assert all((repo / out).is_file() for out in outs)
        assert "in sync" in dvc("status", "-c", "--with-deps", *stages).stdout
        assert "up to date" in dvc("status", "--with-deps", *stages).stdout.lower()

    # pulled files are newer than what was made from them (without --touch, the jobs reading them re-run for
    # "updated input files"); dvc status -c vouched for their content, so Snakemake is told they are current (README)
    run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "--touch", *papers], repo)
    dry = run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "-n", *papers], repo).stdout
    assert "Nothing to be done" in dry, dry[-3000:]
