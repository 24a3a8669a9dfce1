"""Shared fixtures: a throw-away copy of the repository in which the smoke profile runs end to end."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's snakemake, dvc, mlflow


def env() -> dict:
    e = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", MLFLOW_DISABLE_TELEMETRY="true")
    e.pop("MLFLOW_TRACKING_URI", None)  # each copy uses its own embedded SQLite store
    return e


def run(cmd: list[str], cwd: Path, check: bool = True, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=kw.pop("env", env()), capture_output=True, text=True, **kw)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return done


def copy_repo(dest: Path) -> Path:
    """The project's files (tracked and new, not ignored) as a fresh git repository, plus the data cache."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    if (ROOT / "data" / "cache").is_dir():  # saves re-downloading registry files already fetched here
        shutil.copytree(ROOT / "data" / "cache", dest / "data" / "cache")
    run(["git", "init", "-q"], dest)
    run(["git", "add", "-A"], dest)
    run(["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-qm", "snapshot"], dest)
    return dest


def smoke_run(dest: Path, *targets: str) -> Path:
    """A copy of the repository after `snakemake --profile profiles/smoke [targets]` (no targets: every paper)."""
    repo = copy_repo(dest)
    run([str(BIN / "snakemake"), "--profile", "profiles/smoke", *targets], repo)
    return repo


@pytest.fixture(scope="session")
def smoke_repo(tmp_path_factory) -> Path:
    """Every paper's smoke run (once per test session)."""
    return smoke_run(tmp_path_factory.mktemp("smoke"))


# The papers the scale tests (tests/scale) run beyond one machine: short smoke runs that still cover real data (cosa's
# fetch), training, a checkpoint dependency and the claims engine. Their session builds only these, plus one more
# paper for `make track-sync` to find untracked (all nineteen would add four minutes to CI that no scale test reads).
SCALE_PAPERS = ("adam_implicit_bias", "cosa")
SCALE_OTHER_PAPER = "hypergraph_sparsify"


@pytest.fixture(scope="session")
def scale_smoke_repo(tmp_path_factory) -> Path:
    """The scale tests' smoke run: SCALE_PAPERS and SCALE_OTHER_PAPER, each with its track job (once per session)."""
    return smoke_run(tmp_path_factory.mktemp("scale-smoke"), *SCALE_PAPERS, SCALE_OTHER_PAPER)


@pytest.fixture(scope="session")
def dashboard(smoke_repo):
    """The MLflow UI (`make mlflow-ui`'s command) on the smoke run's store, on a free loopback port: yields the port."""
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = run(["python", "-m", "workflow.tools.track", "uri"], smoke_repo).stdout.strip()
    server = subprocess.Popen([str(BIN / "mlflow"), "ui", "--backend-store-uri", uri, "--host", "127.0.0.1",
                               "--port", str(port), "--workers", "1"], cwd=smoke_repo, env=env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(120):  # the UI needs 20-35 s to start on a busy 2-core machine
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
                break
            except OSError:
                time.sleep(1)
        else:
            raise AssertionError("the MLflow UI did not answer within 120 s")
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)
