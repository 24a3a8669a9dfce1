"""Real services on one machine for the tests of `make test-scale`: a single-node SLURM cluster and an S3 server.

Each is a context manager that starts the real daemons in a folder of the test's own, waits (bounded) until they
answer, and stops them on exit; when one cannot start it raises ServiceError naming what failed and where its log
is, never hangs. What was measured bringing them up here, with the traps: ../shared/STACK.md, "Beyond one machine".
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from conftest import SCALE_PAPERS as PAPERS  # their claims must equal the local smoke run's (scale_smoke_repo)

CLAIMS = [f"results/{paper}/claims.json" for paper in PAPERS]
SLURM_CONF = Path("/etc/slurm/slurm.conf")
MARK = "# a single-node test cluster written by tests/scale/services.py"
# moto accepts any credentials; S3 clients (boto3, dvc-s3) refuse to sign a request without some
S3_ENV = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}


class ServiceError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(ready, what: str, log: Path | None, timeout: float) -> None:
    """Poll `ready()` until it is true; after `timeout` seconds raise with the tail of the service's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.3)
    tail = log.read_text()[-2000:] if log and log.exists() else "(no log)"
    raise ServiceError(f"{what} did not come up within {timeout:.0f} s; last lines of {log}:\n{tail}")


def quiet(cmd: list[str], timeout: float = 10, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def stop(proc: subprocess.Popen) -> None:
    """Kill a service started in its own session, with everything it started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def slurm_conf(folder: Path, cpus: int, memory_mb: int) -> str:
    """A single-node cluster: this host runs slurmctld and slurmd; no accounting, no cgroups (no systemd here)."""
    host = socket.gethostname()
    return f"""{MARK}
ClusterName=local
SlurmctldHost={host}
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
# squeue must still see finished jobs when the executor asks (keep >= 3x its first status delay)
MinJobAge=300
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
NodeName={host} CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=main Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def start_munge(folder: Path) -> subprocess.Popen | None:
    """munged as user munge, unless one already answers (then it is left alone)."""
    if quiet(["bash", "-c", "munge -n | unmunge"]).returncode == 0:
        return None
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    log = folder / "munged.log"
    proc = subprocess.Popen(["runuser", "-u", "munge", "--", "munged", "--foreground", "--force"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    wait_until(lambda: quiet(["bash", "-c", "munge -n | unmunge"]).returncode == 0, "munged", log, 15)
    return proc


@contextlib.contextmanager
def slurm_cluster(folder: Path, cpus: int = 2, timeout: float = 30):
    """A running single-node SLURM cluster (slurmctld, slurmd, munge) whose config is /etc/slurm/slurm.conf.

    The config must be at the default path: the Snakemake SLURM executor's job step clears SLURM_CONF before its
    nested srun. An existing /etc/slurm/slurm.conf that is not a link made here is never replaced."""
    for tool in ("slurmctld", "slurmd", "munged", "sbatch", "squeue"):
        if not shutil.which(tool):
            raise ServiceError(f"{tool} not found: install SLURM first (`make test-scale` runs "
                               f"apt-get install slurm-wlm munge as root)")
    if os.geteuid() != 0:
        raise ServiceError("a local SLURM cluster needs root (slurmd runs jobs as their users): run as root")
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):  # a new cluster each time: no jobs or node states of an earlier one
        shutil.rmtree(folder / sub, ignore_errors=True)
        (folder / sub).mkdir()
    memory = int(int(Path("/proc/meminfo").read_text().split("MemAvailable:")[1].split()[0]) / 1024 * 0.8)
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, cpus, memory))
    if SLURM_CONF.exists() and not SLURM_CONF.read_text().startswith(MARK):
        raise ServiceError(f"{SLURM_CONF} exists and was not made by this test: refusing to replace it")
    SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
    SLURM_CONF.unlink(missing_ok=True)
    SLURM_CONF.symlink_to(conf)
    munge = start_munge(folder)
    daemons = []
    try:
        for daemon in (["slurmctld", "-i", "-D"], ["slurmd", "-D"]):
            daemons.append(subprocess.Popen([*daemon, "-f", str(conf)], stdout=subprocess.DEVNULL,
                                            stderr=(folder / f"{daemon[0]}.stderr").open("w"),
                                            start_new_session=True))
        idle = lambda: quiet(["sinfo", "-h", "-o", "%T"]).stdout.strip() == "idle"  # noqa: E731
        wait_until(idle, "the SLURM node", folder / "slurmd.log", timeout)
        yield conf
    finally:
        quiet(["scancel", "--user", "root"], check=False)
        for proc in [*daemons, munge]:
            if proc is not None:
                stop(proc)
        SLURM_CONF.unlink(missing_ok=True)


@contextlib.contextmanager
def s3_server(folder: Path, bucket: str, timeout: float = 20):
    """moto's S3 server on loopback with one bucket; yields its endpoint URL (clients pass S3_ENV's credentials)."""
    import boto3

    port = free_port()
    log = folder / "moto.log"
    proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)], stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        def up():
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
            return False

        wait_until(up, "moto's S3 server", log, timeout)
        boto3.client("s3", endpoint_url=url, region_name=S3_ENV["AWS_DEFAULT_REGION"],
                     aws_access_key_id=S3_ENV["AWS_ACCESS_KEY_ID"],
                     aws_secret_access_key=S3_ENV["AWS_SECRET_ACCESS_KEY"]).create_bucket(Bucket=bucket)
        yield url
    finally:
        stop(proc)
