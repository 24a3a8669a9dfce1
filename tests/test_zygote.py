"""The warm interpreter jobs fork from (workflow/core/zygote.py): a forked job is the job, and nothing outlives it."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workflow.core import zygote
from workflow.core.params import ROOT

CLIENT = "import sys; from pathlib import Path; from workflow.core import zygote; " \
         "status = zygote.forward(sys.argv[2:], Path(sys.argv[1])); print('forked' if status is not None else 'not forked'); " \
         "sys.exit(0 if status is None else status)"
LIGHT = dict(os.environ, REPRO_ZYGOTE_PRELOAD="yaml")  # a zygote that starts in a fraction of a second


def wait_for(predicate, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.fixture
def warm(tmp_path, monkeypatch):
    """A zygote on a socket of this test's own, started as Snakemake's onstart starts it."""
    monkeypatch.setenv("REPRO_ZYGOTE_PRELOAD", "yaml")
    path = tmp_path / "z.sock"
    log = tmp_path / "zygote.log"
    process = zygote.start(sys.executable, log, path)
    wait_for(lambda: "ready" in log.read_text())
    yield path
    zygote.stop(process)
    assert process.poll() is not None and not path.exists(), "the zygote outlived stop() or left its socket"


def job(path: Path, *argv: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLIENT, str(path), *argv], cwd=ROOT, capture_output=True, text=True,
                          env=env or LIGHT)


def test_a_forked_job_writes_the_same_log_and_exits_with_the_same_status_as_one_in_its_own_interpreter(warm, tmp_path):
    for argv, status in ((["core.tracking", "--help"], 0), (["core.tracking", "no-such-command"], 2)):
        forked = job(warm, *argv, "--log", str(tmp_path / "forked.log"))
        alone = subprocess.run([sys.executable, "-m", "workflow.run", *argv, "--log", str(tmp_path / "alone.log")],
                               cwd=ROOT, capture_output=True, text=True, env=dict(LIGHT, REPRO_ZYGOTE="off"))
        assert forked.stdout.strip() == "forked" and forked.returncode == alone.returncode == status
        assert (tmp_path / "forked.log").read_text() == (tmp_path / "alone.log").read_text()


def test_a_job_runs_in_its_own_interpreter_where_no_zygote_answers(tmp_path):
    assert zygote.forward(["core.tracking", "--help"], tmp_path / "none.sock") is None
    stale = tmp_path / "stale.sock"
    stale.write_text("")  # a file left where a socket was: connect fails
    assert zygote.forward(["core.tracking", "--help"], stale) is None


def test_a_killed_job_takes_its_forked_child_along(warm, tmp_path):
    """The child here is a second zygote (a step that runs until stopped); its job is killed with SIGKILL."""
    log = tmp_path / "child.log"
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(warm), "core.zygote", "serve",
                               str(tmp_path / "inner.sock"), "--log", str(log)], cwd=ROOT, env=LIGHT)
    wait_for(lambda: log.exists() and "ready" in log.read_text())
    child = int(log.read_text().split()[1])
    client.send_signal(signal.SIGKILL)
    client.wait()
    wait_for(lambda: not Path(f"/proc/{child}").exists(), seconds=10)


def test_the_zygote_ends_with_the_run_that_started_it(tmp_path):
    path, log = tmp_path / "z.sock", tmp_path / "zygote.log"
    starter = ("import sys; from pathlib import Path; from workflow.core import zygote; "
               f"print(zygote.start(sys.executable, Path({str(log)!r}), Path({str(path)!r})).pid)")
    pid = int(subprocess.run([sys.executable, "-c", starter], cwd=ROOT, capture_output=True, text=True, env=LIGHT,
                             check=True).stdout)
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z",
             seconds=15)
    assert not path.exists()
