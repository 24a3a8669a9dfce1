"""A warm interpreter that jobs fork from: torch, numpy, pandas, matplotlib and MLflow imported once per run.

Every job is a fresh `python -m workflow.run ...`, and importing its libraries cost it 1-1.5 s (torch alone
about 1 s; MLflow 2-3 s in each track job): 40 % of the smoke profile's job time and most of the default
profile's job overhead (bench/job_overhead.py). Snakemake starts one zygote per run (rules/common.smk, onstart:
local runs only) and stops it at the end. A job's `workflow.run` connects to it and hands over its command line,
working folder, environment and its stdin/stdout/stderr; the zygote forks, the child runs the job exactly as a
fresh interpreter would (`workflow.run`'s main, with the job's own fds, folder and environment), and the job's
process waits for the child's exit status and exits with it. Nothing else changes: the step's code is imported in
the child, never in the zygote (an edit is seen by the next job), and its results are the same bytes.

The job's process stays what Snakemake watches: killing it kills the child (the zygote sees its connection close),
a signal it gets is passed on, and the zygote lives in Snakemake's process group (a `kill` of the run's group
takes it along) and ends when Snakemake does. Where no zygote answers (a cluster node, `dvc repro`, a job run by
hand, the first seconds of a run while the zygote imports), the job runs in its own interpreter as before.
Snakemake's benchmark file times the job's wall clock as before; its memory and CPU columns then see only the
waiting process, so the step records its own peak memory and CPU time in its run record (core/step.py).

    python -m workflow.core.zygote serve [SOCKET [PID]]   # what onstart runs (in the background), for Snakemake's PID
"""
from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Imported once in the zygote: what most steps import (a module missing from the environment is skipped).
PRELOAD = ("numpy", "pandas", "scipy.stats", "torch", "matplotlib.pyplot", "seaborn", "sklearn", "yaml",
           "jsonschema", "mlflow.tracking",
           "torch._dynamo")  # torch imports it when a job builds its first optimizer: 1-1.5 s of every training job
MAX_REQUEST = 1 << 20  # bytes: a command line and an environment
STATUS = struct.Struct("!i")


def socket_path(root: Path = ROOT) -> Path:
    """One zygote per project folder and interpreter, on the local disk (a unix socket cannot cross machines, and
    its path must stay under 108 bytes)."""
    key = hashlib.sha256(f"{root}\0{sys.executable}".encode()).hexdigest()[:16]
    return Path("/tmp") / f"repro-zygote-{key}.sock"


# ---- the job's side ------------------------------------------------------------------------------------------------

def forward(argv: list[str], path: Path | None = None) -> int | None:
    """Run `python -m workflow.run <argv>` in a child of the zygote: its exit status, or None when no zygote
    answers (the caller then runs the job itself)."""
    path = path or socket_path()
    if os.environ.get("REPRO_ZYGOTE") == "off" or not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect(str(path))
        request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(sock, [request], [0, 1, 2])
        reply = sock.recv(STATUS.size)
    except OSError:  # no zygote (a stale socket, another machine), or it went away before it forked
        sock.close()
        return None
    if len(reply) != STATUS.size:
        sock.close()
        return None
    child = STATUS.unpack(reply)[0]
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # passed on: the child ends as the job would
        signal.signal(sig, lambda signum, frame: os.kill(child, signum))
    reply = sock.recv(STATUS.size)  # a signal passed on meanwhile does not end the wait (PEP 475 retries recv)
    if len(reply) != STATUS.size:
        print(f"workflow.run: the zygote ended before job {child} did; see .snakemake/zygote.log", file=sys.stderr)
        return 1
    return STATUS.unpack(reply)[0]


# ---- the zygote's side ---------------------------------------------------------------------------------------------

def preload() -> list[str]:
    import importlib

    import workflow  # noqa: F401 - pins the BLAS threads and kernels before numpy and torch load

    os.environ.setdefault("MPLBACKEND", "Agg")
    loaded = []
    names = os.environ["REPRO_ZYGOTE_PRELOAD"].split(",") if "REPRO_ZYGOTE_PRELOAD" in os.environ else PRELOAD
    for name in filter(None, names):  # the tests' zygotes preload less
        try:
            importlib.import_module(name)
            loaded.append(name)
        except ImportError:
            pass
    return loaded


def run_child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the job (its fds, folder, environment, command line) and run it."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [str(ROOT / "workflow" / "run.py"), *request["argv"]]  # as `python -m workflow.run` has it
    from workflow import run  # imported here, not in the zygote: the code of this run, not of its start

    run.run_job(request["argv"])  # ends the process with the job's status (os._exit)


def exit_status(wait_status: int) -> int:
    return os.waitstatus_to_exitcode(wait_status) if os.WIFEXITED(wait_status) else 128 + os.WTERMSIG(wait_status)


def serve(path: Path, parent: int) -> None:
    """Fork one child per request, tell each job its child's pid and then its exit status; kill a child whose
    job went away; end with the process that started the zygote (Snakemake)."""
    began = time.monotonic()
    loaded = preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    path.unlink(missing_ok=True)
    listener.bind(str(path))
    listener.listen(64)
    print(f"zygote {os.getpid()} ready on {path} in {time.monotonic() - began:.1f} s ({', '.join(loaded)})", flush=True)
    jobs: dict[int, tuple[socket.socket, int]] = {}  # pidfd -> (the job's connection, child pid)
    by_conn: dict[int, int] = {}  # connection fd -> pidfd
    try:
        while os.getppid() == parent:
            ready, _, _ = select.select([listener, *[c for c, _ in jobs.values()], *jobs], [], [], 1.0)
            for item in ready:
                if item is listener:
                    conn, _ = listener.accept()
                    try:
                        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
                    except OSError:
                        conn.close()
                        continue
                    child = os.fork()
                    if child == 0:
                        listener.close()
                        run_child(json.loads(data), fds)
                    for fd in fds:
                        os.close(fd)
                    pidfd = os.pidfd_open(child)
                    jobs[pidfd] = (conn, child)
                    by_conn[conn.fileno()] = pidfd
                    conn.send(STATUS.pack(child))
                elif isinstance(item, int):  # a child ended
                    conn, child = jobs.pop(item)
                    by_conn.pop(conn.fileno(), None)
                    _, wait_status = os.waitpid(child, 0)
                    os.close(item)
                    try:
                        conn.send(STATUS.pack(exit_status(wait_status)))
                    except OSError:
                        pass
                    conn.close()
                else:  # a job's connection closed: the job was killed, its child goes too
                    pidfd = by_conn.get(item.fileno())
                    if pidfd is not None and not item.recv(1, socket.MSG_PEEK):
                        os.kill(jobs[pidfd][1], signal.SIGKILL)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        for _, child in jobs.values():
            os.kill(child, signal.SIGKILL)


# ---- Snakemake's side: start and stop --------------------------------------------------------------------------

def start(python: str, log: Path, path: Path | None = None):
    """Start a zygote for this run, in the background (it takes a few seconds to import; jobs that start before
    it is ready run in their own interpreter). Returns the process, for stop()."""
    import subprocess

    path = path or socket_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        return subprocess.Popen([python, "-m", "workflow.core.zygote", "serve", str(path), str(os.getpid())], cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)


def stop(process, timeout: float = 5.0) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if process.poll() is None:
        process.kill()


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "serve":
        raise SystemExit(__doc__)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    path = Path(argv[1]) if len(argv) > 1 else socket_path()
    serve(path, int(argv[2]) if len(argv) > 2 else os.getppid())  # the run it serves: it ends with it


if __name__ == "__main__":
    main()
