"""Runs one step program as a pipeline job (every rule's command, see `step()` in rules/common.smk):

    python -m workflow.run papers.cosa.tta <the step's own arguments> --log results/cosa/logs/tta/x.log ...

- The job's console output (Python's and C libraries' alike) goes to the --log file; its folder is made here, so
  neither Snakemake nor DVC needs a `mkdir` or a shell redirect in the command.
- On success the log's `warning:` lines are repeated on the console (e.g. a data set restored from its verified
  copy because the archive is corrupt); on failure its last lines are, so that neither is buried in a log file.
- Where the run has a zygote (workflow/core/zygote.py), the job is forked from it instead of importing its
  libraries again, and this process waits for it and exits with its status.
- Once the step has returned (its outputs and run record written and closed by workflow/core/io.py), the process
  ends without the interpreter's teardown: freeing torch's and every other module's objects one by one took
  0.5 s per training job, a third of all job overhead (bench/job_overhead.py).

`python -m workflow.papers.cosa.tta ...` still runs a step by hand, with its output on the console.
"""
from __future__ import annotations

import importlib
import os
import sys
import traceback
from pathlib import Path

TAIL_LINES = 30  # of a failed job's log, shown on the console


def split_log(argv: list[str]) -> tuple[Path, list[str]]:
    """(the --log path, the step's own arguments without it)."""
    if "--log" not in argv or argv.index("--log") + 1 >= len(argv):
        raise SystemExit("usage: python -m workflow.run <module under workflow/> <step arguments> --log FILE")
    i = argv.index("--log")
    return Path(argv[i + 1]), argv[:i] + argv[i + 2:]


def run_step(module: str, argv: list[str]) -> int:
    """The step's exit status: its main's return value, a SystemExit's code (argparse: 2), 1 on an exception."""
    try:
        status = importlib.import_module(f"workflow.{module}").main(argv)
    except SystemExit as stop:
        status = stop.code
    except BaseException:  # noqa: BLE001 - the traceback goes to the log, the status to Snakemake
        traceback.print_exc()
        return 1
    if status is None or isinstance(status, int):
        return status or 0
    print(status, file=sys.stderr)  # SystemExit("message"), as Python itself would show it
    return 1


def console_lines(log: Path, status: int) -> list[str]:
    """What the console shows of a finished job: its warnings, or the tail of a failed job's log."""
    lines = log.read_text(errors="replace").splitlines()
    if status == 0:
        return [line for line in lines if line.startswith("warning:")]
    return [f"--- last lines of {log} ---", *lines[-TAIL_LINES:]]


def main() -> None:
    """Hand the job to the run's zygote (workflow/core/zygote.py: its libraries are imported already); where none
    answers, run it here."""
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    from workflow.core import zygote

    status = zygote.forward(sys.argv[1:])
    if status is not None:
        os._exit(status)
    run_job(sys.argv[1:])


def run_job(args: list[str]) -> None:
    """Run the step `args[0]` with its arguments, its output to the --log file; ends the process with its status."""
    module = args[0]
    log, argv = split_log(args[1:])
    log.parent.mkdir(parents=True, exist_ok=True)
    console = os.fdopen(os.dup(2), "w")
    with open(log, "w") as fh:  # fds 1 and 2 themselves, so that C libraries' output lands in the log too
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
    status = run_step(module, argv)
    sys.stdout.flush()
    sys.stderr.flush()
    for line in console_lines(log, status):
        print(line, file=console)
    console.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
