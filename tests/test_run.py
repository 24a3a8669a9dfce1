"""The job runner (workflow/run.py): exit statuses, the log, and what the console shows."""
from __future__ import annotations

import subprocess
import sys
import types

import pytest

from workflow import run as R

from conftest import ROOT, env


@pytest.fixture
def fake_step(monkeypatch):
    """A step module `workflow.fake_step` whose main does what the test gives it."""
    module = types.ModuleType("workflow.fake_step")
    monkeypatch.setitem(sys.modules, "workflow.fake_step", module)
    return module


@pytest.mark.parametrize("outcome, status, shown", [
    (lambda argv: None, 0, ""), (lambda argv: 0, 0, ""), (lambda argv: 3, 3, ""),
    (lambda argv: sys.exit(2), 2, ""), (lambda argv: sys.exit("bad input: fix it"), 1, "bad input: fix it\n"),
    (lambda argv: 1 / 0, 1, "ZeroDivisionError"),
])
def test_the_status_is_the_steps(fake_step, outcome, status, shown, capsys):
    fake_step.main = outcome
    assert R.run_step("fake_step", ["--x"]) == status
    err = capsys.readouterr().err
    assert shown in err and (err == "") == (shown == "")


def test_the_step_gets_its_arguments_without_the_log(fake_step):
    seen = []
    fake_step.main = seen.append
    log, argv = R.split_log(["--data", "a.csv", "--log", "x.log", "--seed", "0"])
    R.run_step("fake_step", argv)
    assert str(log) == "x.log" and seen == [["--data", "a.csv", "--seed", "0"]]
    with pytest.raises(SystemExit, match="--log FILE"):
        R.split_log(["--data", "a.csv", "--log"])


def test_the_console_shows_warnings_or_a_failed_jobs_tail(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("".join(f"line {i}\n" for i in range(40)) + "warning: archive corrupt, restored\n")
    assert R.console_lines(log, 0) == ["warning: archive corrupt, restored"]
    failed = R.console_lines(log, 1)
    assert failed[0] == f"--- last lines of {log} ---" and failed[1:] == [
        *(f"line {i}" for i in range(11, 40)), "warning: archive corrupt, restored"]


def test_a_failing_job_makes_its_log_folder_and_shows_the_tail(tmp_path):
    log = tmp_path / "logs" / "fetch" / "x.log"
    done = subprocess.run([sys.executable, "-m", "workflow.run", "core.fetch", "--log", str(log)],
                          cwd=ROOT, env=env(), capture_output=True, text=True)
    assert done.returncode == 2  # argparse's status, passed through
    assert "the following arguments are required: name, out" in log.read_text()
    assert f"--- last lines of {log} ---" in done.stderr and "required: name, out" in done.stderr
    assert done.stdout == ""
