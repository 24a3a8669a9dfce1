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


@pytest.fixture(scope="session")
def smoke_repo(tmp_path_factory) -> Path:
    """A copy of the repository after `snakemake --profile profiles/smoke` (run once per test session)."""
    repo = copy_repo(tmp_path_factory.mktemp("smoke"))
    run([str(BIN / "snakemake"), "--profile", "profiles/smoke"], repo)
    return repo
