"""A shared MLflow tracking server: PostgreSQL backend store and an artifact root, on 127.0.0.1.

    make mlflow-server                                   # serves until Ctrl-C (first use creates .mlflow-server/)
    MLFLOW_TRACKING_URI=http://127.0.0.1:5001 make reproduce   # runs are logged there (track jobs, make track-sync)

The PostgreSQL cluster is the project's own (.mlflow-server/postgres, created by initdb on first use, listening on
127.0.0.1 and a socket in that folder only, which is private to the user running PostgreSQL). On a shared login
node every local user reaches 127.0.0.1, so every connection needs a password (scram-sha-256): an admin superuser
whose password only this module uses, to create the `mlflow` role and database, and the `mlflow` role, which owns
that database and nothing more (no superuser, no new roles or databases), for MLflow. Both passwords are generated
on first use and kept outside the repository, readable by you alone (secrets_file). A cluster that an older
version created with trust authentication is refused, never served. Artifacts go to .mlflow-server/artifacts and
are served through the server (`--artifacts-destination`), so clients need no shared file system. For a lab, put
the same `mlflow server` command on a machine everyone reaches and point MLFLOW_TRACKING_URI at it.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from workflow.core.params import ROOT

FOLDER = ROOT / ".mlflow-server"
PG_BIN = Path("/usr/lib/postgresql/15/bin")  # Debian's PostgreSQL 15; elsewhere initdb/pg_ctl from PATH
DATABASE = "mlflow"
ROLE = "mlflow"  # MLflow's login role: owns DATABASE, no superuser
ADMIN = "mlflow_admin"  # the cluster's superuser: only this module logs in as it, to create ROLE and DATABASE
# The passwords live in the user's config folder, never in the repository: git, DVC, a copy or an archive of the
# project must not carry them, and the folder is the user's alone (0700, files 0600).
CONFIG = Path("iclr2026-repro")


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


def run(cmd: list[str], what: str, timeout: float = 60, password: str | None = None, sql: str | None = None) -> str:
    """Run a PostgreSQL tool; a password goes through its environment (PGPASSWORD), SQL through its stdin: never
    on a command line, which every local user can read (ps)."""
    env = dict(os.environ, PGPASSWORD=password) if password else None
    done = subprocess.run(as_postgres(cmd), input=sql, capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise ServerError(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-1500:]}")
    return done.stdout


def secrets_file(folder: Path) -> Path:
    """Where the passwords of the cluster in `folder` are kept: one file per cluster folder (a hash of its resolved
    path), so that servers with different --folder values neither share nor overwrite each other's passwords."""
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / CONFIG / f"mlflow-server-{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]}.json"


def write_private(path: Path, text: str) -> None:
    """Write `text` readable by the owner alone (0600, in a 0700 folder), created so from the start and replaced
    atomically, never a moment world-readable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)  # a leftover would keep its mode: O_EXCL makes a new file, 0600 from birth
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write(text)
    os.replace(tmp, path)


def new_secrets(folder: Path) -> dict[str, str]:
    """Fresh passwords for a cluster about to be created in `folder`, saved before initdb uses them."""
    passwords = {ADMIN: secrets.token_urlsafe(32), ROLE: secrets.token_urlsafe(32)}
    write_private(secrets_file(folder), json.dumps({"folder": str(folder.resolve()), **passwords}, indent=1))
    return passwords


def load_secrets(folder: Path) -> dict[str, str]:
    """The passwords saved when the cluster in `folder` was created."""
    path = secrets_file(folder)
    try:
        saved = json.loads(path.read_text())
        return {ADMIN: saved[ADMIN], ROLE: saved[ROLE]}
    except (OSError, ValueError, KeyError):
        raise ServerError(f"the passwords of the PostgreSQL cluster in {folder} are not in {path} (made by another "
                          f"user, or the file was removed): remove {folder} to recreate it") from None


def trusting(data: Path) -> bool:
    """Whether a cluster's pg_hba.conf lets anyone in without a password (initdb --auth=trust, older versions)."""
    lines = (line.split("#")[0].split() for line in (data / "pg_hba.conf").read_text().splitlines())
    return any("trust" in fields for fields in lines if fields)


def existing_passwords(folder: Path, data: Path) -> dict[str, str]:
    """The passwords of the cluster in `data`; one that lets anyone in without a password is refused, never served."""
    if trusting(data):
        raise ServerError(f"the PostgreSQL cluster in {data} was created with trust authentication by an older "
                          f"version (any local user could connect as its superuser): remove {folder} to recreate "
                          f"it with passwords (its runs are lost: export any you need first)")
    return load_secrets(folder)


def store_uri(port: int, password: str) -> str:
    """MLflow's backend store: the `mlflow` role with its password (URL-encoded), over TCP on 127.0.0.1."""
    return f"postgresql://{ROLE}:{urllib.parse.quote(password, safe='')}@127.0.0.1:{port}/{DATABASE}"


def private_folder(folder: Path) -> None:
    """The cluster's folder holds its unix socket: it must belong to the user running PostgreSQL and be closed to
    everyone else (0700), or other users could reach the socket."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        if subprocess.run(as_postgres(["test", "-w", str(folder)]), timeout=10).returncode != 0:
            raise ServerError(f"user postgres cannot reach {folder} (a parent folder is private to root): "
                              f"pass --folder with a path under /tmp or /srv, or make the parents traversable")
    owner = pwd.getpwnam("postgres").pw_uid if os.geteuid() == 0 else os.geteuid()
    if folder.stat().st_uid != owner:
        raise ServerError(f"{folder} belongs to uid {folder.stat().st_uid}, not to uid {owner} who runs PostgreSQL "
                          f"(its socket would be theirs to reach): pass a --folder of your own")
    folder.chmod(0o700)


def initdb(folder: Path, data: Path, admin_password: str) -> None:
    """A new cluster that asks every connection, local or TCP, for a password; its superuser is ADMIN."""
    pwfile = folder / ".initdb-password"  # in the private folder, readable by PostgreSQL's user only, then removed
    write_private(pwfile, admin_password)
    try:
        if os.geteuid() == 0:
            shutil.chown(pwfile, "postgres")
        run([pg_tool("initdb"), "--auth=scram-sha-256", f"--username={ADMIN}", f"--pwfile={pwfile}",
             "-D", str(data)], "initdb")
    finally:
        pwfile.unlink(missing_ok=True)


def create_role_and_database(folder: Path, port: int, passwords: dict[str, str]) -> None:
    """ROLE (a plain login role with its password) and DATABASE owned by it; idempotent. The statement that holds
    the password must never reach the server's log, even when it fails."""
    password = passwords[ROLE].replace("'", "''")
    sql = "\n".join([
        "SET log_statement = 'none';",
        "SET log_min_error_statement = 'panic';",
        f"SELECT 'CREATE ROLE {ROLE}' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') \\gexec",
        f"ALTER ROLE {ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '{password}';",
        f"SELECT 'CREATE DATABASE {DATABASE} OWNER {ROLE}'",
        f"  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '{DATABASE}') \\gexec", ""])
    run([pg_tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(folder), "-p", str(port), "-U", ADMIN,
         "-d", "postgres"], f"creating the {ROLE} role and database", password=passwords[ADMIN], sql=sql)


@contextlib.contextmanager
def postgres(folder: Path, port: int):
    """A running PostgreSQL cluster in `folder` with the `mlflow` database; yields its SQLAlchemy URI (which holds
    the `mlflow` role's password: pass it on through the environment, never a command line)."""
    folder = folder.resolve()  # the socket folder (-k) must be absolute
    data = folder / "postgres"
    private_folder(folder)
    if (data / "PG_VERSION").exists():
        passwords = existing_passwords(folder, data)
    else:
        passwords = new_secrets(folder)
        initdb(folder, data, passwords[ADMIN])
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c unix_socket_permissions=0700"
    run([pg_tool("pg_ctl"), "start", "-w", "-t", "30", "-D", str(data), "-l", str(folder / "postgres.log"),
         "-o", options], f"starting PostgreSQL (log: {folder / 'postgres.log'})")
    try:
        create_role_and_database(folder, port, passwords)
        yield store_uri(port, passwords[ROLE])
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
        env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false",  # else 7 extra job-runner workers
                   MLFLOW_BACKEND_STORE_URI=store)  # it holds a password: not on the command line (ps)
        proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server",
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
            print(f"MLflow server on {url} (store: PostgreSQL in {args.folder}/postgres, its passwords in "
                  f"{secrets_file(args.folder)}). Log runs to it with\n"
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
