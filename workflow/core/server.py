"""A shared MLflow tracking server: PostgreSQL backend store and an artifact root, on 127.0.0.1.

    make mlflow-server                                   # serves until Ctrl-C (first use creates .mlflow-server/)
    MLFLOW_TRACKING_URI=http://127.0.0.1:5001 make reproduce   # runs are logged there (track jobs, make track-sync)

The PostgreSQL cluster is the project's own (.mlflow-server/postgres, created by initdb on first use, trust
authentication, listening on 127.0.0.1 and a socket in that folder only); artifacts go to .mlflow-server/artifacts
and are served through the server (`--artifacts-destination`), so clients need no shared file system. For a lab,
put the same `mlflow server` command on a machine everyone reaches and point MLFLOW_TRACKING_URI at it.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .params import ROOT

FOLDER = ROOT / ".mlflow-server"
PG_BIN = Path("/usr/lib/postgresql/15/bin")  # Debian's PostgreSQL 15; elsewhere initdb/pg_ctl from PATH
DATABASE = "mlflow"


class ServerError(RuntimeError):
    pass


def pg_tool(name: str) -> str:
    path = PG_BIN / name if (PG_BIN / name).exists() else shutil.which(name)
    if not path:
        raise ServerError(f"{name} not found: install PostgreSQL (Debian: apt-get install postgresql)")
    return str(path)


def as_postgres(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def run(cmd: list[str], what: str, timeout: float = 60) -> None:
    done = subprocess.run(as_postgres(cmd), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise ServerError(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-1500:]}")


@contextlib.contextmanager
def postgres(folder: Path, port: int):
    """A running PostgreSQL cluster in `folder` with the `mlflow` database; yields its SQLAlchemy URI."""
    data = folder / "postgres"
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        if subprocess.run(as_postgres(["test", "-w", str(folder)]), timeout=10).returncode != 0:
            raise ServerError(f"user postgres cannot reach {folder} (a parent folder is private to root): "
                              f"pass --folder with a path under /tmp or /srv, or make the parents traversable")
    if not (data / "PG_VERSION").exists():
        run([pg_tool("initdb"), "--auth=trust", "--username=mlflow", "-D", str(data)], "initdb")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
    run([pg_tool("pg_ctl"), "start", "-w", "-t", "30", "-D", str(data), "-l", str(folder / "postgres.log"),
         "-o", options], f"starting PostgreSQL (log: {folder / 'postgres.log'})")
    try:
        exists = subprocess.run(as_postgres([pg_tool("psql"), "-h", str(folder), "-p", str(port), "-U", "mlflow",
                                             "-d", "postgres", "-tAc",
                                             f"SELECT 1 FROM pg_database WHERE datname='{DATABASE}'"]),
                                capture_output=True, text=True, timeout=30).stdout.strip()
        if exists != "1":
            run([pg_tool("createdb"), "-h", str(folder), "-p", str(port), "-U", "mlflow", DATABASE], "createdb")
        yield f"postgresql://mlflow@127.0.0.1:{port}/{DATABASE}"
    finally:
        run([pg_tool("pg_ctl"), "stop", "-m", "fast", "-D", str(data)], "stopping PostgreSQL")


def healthy(url: str) -> bool:
    with contextlib.suppress(OSError):
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return r.status == 200
    return False


@contextlib.contextmanager
def mlflow_server(folder: Path, port: int, pg_port: int, timeout: float = 90):
    """PostgreSQL plus `mlflow server` on 127.0.0.1:port; yields the tracking URI once /health answers."""
    with postgres(folder, pg_port) as store:
        artifacts = folder / "artifacts"
        artifacts.mkdir(parents=True, exist_ok=True)
        log = folder / "mlflow-server.log"
        env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")  # else 7 extra job-runner workers
        proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri", store,
                                 "--artifacts-destination", str(artifacts), "--host", "127.0.0.1",
                                 "--port", str(port), "--workers", "1"],
                                stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while not healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise ServerError(f"mlflow server did not answer on {url}; last lines of {log}:\n"
                                      f"{log.read_text()[-2000:]}")
                time.sleep(0.5)
            yield url
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
            proc.wait(timeout=30)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=5001, help="the server's port (make mlflow-ui uses 5000)")
    parser.add_argument("--pg-port", type=int, default=5433, help="PostgreSQL's port (127.0.0.1 only)")
    parser.add_argument("--folder", type=Path, default=FOLDER)
    args = parser.parse_args(argv)
    try:
        with mlflow_server(args.folder, args.port, args.pg_port) as url:
            print(f"MLflow server on {url} (store: PostgreSQL in {args.folder}/postgres). Log runs to it with\n"
                  f"  export MLFLOW_TRACKING_URI={url}\nCtrl-C stops it.", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    except ServerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
