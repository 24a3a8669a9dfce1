"""`make mlflow-server` on a real PostgreSQL, as another local user would find it: no connection without a password
(TCP or socket, MLflow's role or the admin's), MLflow's role no superuser, the socket out of other users' reach, the
passwords outside the repository and never printed or written elsewhere; MLflow logs a run through it all the same.
A cluster of an older version (trust authentication) is refused."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, env
from services import free_port

from workflow.tools import server


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    """The user's config folder, where the server keeps its passwords: a temporary one."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def folder():
    """The server's folder under /tmp (as root, PostgreSQL runs as user postgres and cannot enter tmp_path)."""
    path = Path(tempfile.mkdtemp(prefix="mlflow-server-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def psql(host: str, port: int, user: str, sql: str = "SELECT 1", password: str | None = None,
         as_user: str | None = None) -> subprocess.CompletedProcess:
    """psql -w (never prompts) as `user`; PGPASSWORD only when a password is given."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password:
        e["PGPASSWORD"] = password
    prefix = ["runuser", "-u", as_user, "--"] if as_user else []
    return subprocess.run([*prefix, server.pg_tool("psql"), "-X", "-w", "-tA", "-h", host, "-p", str(port),
                           "-U", user, "-d", server.DATABASE, "-c", sql], env=e, capture_output=True, text=True,
                          timeout=30)


def test_no_connection_without_a_password_and_mlflow_is_no_superuser(config, folder):
    port = free_port()
    with server.postgres(folder, port):
        for user in (server.ROLE, server.ADMIN):
            for host in ("127.0.0.1", str(folder)):
                refused = psql(host, port, user)
                assert refused.returncode != 0 and "password" in refused.stderr, (user, host, refused)
        passwords = json.loads(server.secrets_file(folder).read_text())
        roles = psql("127.0.0.1", port, server.ROLE, password=passwords[server.ROLE],
                     sql="SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = 'mlflow'")
        assert roles.stdout.strip() == "f|f|f", roles
        owner = psql("127.0.0.1", port, server.ROLE, password=passwords[server.ROLE],
                     sql="SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'mlflow'")
        assert owner.stdout.strip() == server.ROLE, owner
        wrong = psql("127.0.0.1", port, server.ADMIN, password=passwords[server.ROLE])
        assert wrong.returncode != 0 and "password authentication failed" in wrong.stderr, wrong
        if os.geteuid() == 0:  # another local user cannot even reach the socket
            other = psql(str(folder), port, server.ROLE, password=passwords[server.ROLE], as_user="nobody")
            assert other.returncode != 0 and "Permission denied" in other.stderr, other
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    with server.postgres(folder, port):  # a second start logs in with the saved passwords
        assert psql("127.0.0.1", port, server.ROLE, password=passwords[server.ROLE]).stdout.strip() == "1"


def wait_for_line(proc: subprocess.Popen, start: str, timeout: float = 120) -> list[str]:
    """The server's stdout up to and including the line that starts with `start`."""
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith(start):
            return lines
    proc.kill()
    raise AssertionError(f"no line {start!r} from the server:\n{''.join(lines)}{proc.stderr.read()[-3000:]}")


def holding(paths, words: list[str]) -> list[Path]:
    """Those of the files `paths` in which one of `words` appears (a file gone meanwhile holds none)."""
    found = []
    for path in paths:
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink() and any(w.encode() in path.read_bytes() for w in words):
                found.append(path)
    return found


def test_passwords_stay_private_and_unprinted_and_mlflow_logs_through_the_server(config, folder):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "workflow.tools.server", "--folder", str(folder), "--port",
                             str(port), "--pg-port", str(free_port())], cwd=ROOT, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        printed = wait_for_line(proc, "MLflow server on")
        url = f"http://127.0.0.1:{port}"
        secret = server.secrets_file(folder)
        passwords = list(json.loads(secret.read_text())[k] for k in (server.ADMIN, server.ROLE))

        from mlflow.tracking import MlflowClient
        client = MlflowClient(url)
        run = client.create_run(client.create_experiment("server-security"))
        client.log_metric(run.info.run_id, "loss", 0.25)
        client.log_text(run.info.run_id, "through the server", "note.txt")
        client.set_terminated(run.info.run_id)
        assert client.get_run(run.info.run_id).data.metrics == {"loss": 0.25}
        assert any((folder / "artifacts").rglob("note.txt")), "the artifact did not reach the server's store"

        # no command line of any process (ps shows them to every user) holds a password
        assert holding(Path("/proc").glob("[0-9]*/cmdline"), passwords) == []
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    printed = "".join(printed) + out + err
    assert str(secret) in printed
    assert not any(w in printed for w in passwords)

    assert not secret.resolve().is_relative_to(ROOT)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
    assert holding(folder.rglob("*"), passwords) == []  # logs, the database's files, the artifacts
    repository = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                                capture_output=True, check=True).stdout.decode().split("\0")
    assert holding([ROOT / name for name in repository if name], passwords) == []


def test_a_trust_cluster_of_an_older_version_is_refused(config, folder):
    data = folder / "postgres"
    server.private_folder(folder)
    server.run([server.pg_tool("initdb"), "--auth=trust", "--username=mlflow", "-D", str(data)], "initdb")
    with pytest.raises(server.ServerError, match="created with trust authentication") as err:
        with server.postgres(folder, free_port()):
            pass
    assert f"remove {folder}" in str(err.value)
    assert not (data / "postmaster.pid").exists(), "the trust cluster was started"
