"""What a Snakemake run does for itself before and after its jobs (rules/common.smk and the Snakefile call these; no
job does).

* A killed run (kill -9, a closed laptop) leaves Snakemake's lock behind, and every later run would stop until
  `snakemake --unlock`: the lock is removed when no other snakemake works in this folder (clear_stale_lock).
* A job killed during an atomic write (workflow/core/io.py) leaves its hidden temporary file (hundreds of MB for a
  checkpoint). Each temporary name carries its writer (host and process id), so a run removes only those whose
  writer is gone: never the file another run, still working, is about to rename (remove_partial_writes).
* Snakemake arms a timer per scheduling pass that would keep a finished process alive for an hour
  (stop_rate_limit_timers); a tracking outage is reported in one line at the end (report_untracked).
* Once every rule is defined, each rule that runs a command declares the locked software environment and has its
  own name written where its command says `{rule}` (declare_software).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .io import WRITER, this_host

PARTIAL_TOPS = ("results", ".cache")  # where atomic writes happen (outputs, stamps, the import cache)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def parent_pids(pid: int) -> set[int]:
    """`pid` and its parents (`make reproduce`, the shell a `snakemake ...` ran from), read from /proc."""
    mine = set()
    while pid > 1:
        mine.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return mine


def other_snakemake_here(folder: Path | None = None, proc: Path = Path("/proc")) -> list[int]:
    """The process ids of other snakemake processes (not this one, not one of its parents) working in `folder`."""
    mine, here, found = parent_pids(os.getpid()), os.path.realpath(folder or os.getcwd()), []
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
            if any(b"snakemake" in a for a in argv[:2]) and os.path.realpath(os.readlink(f"{entry.path}/cwd")) == here:
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


def clear_stale_lock(folder: Path = Path(".")) -> str:
    """Remove Snakemake's locks when no other snakemake works here; returns the line to show ('' when none).

    A second run started beside a live one keeps the lock, and is told which run holds it: Snakemake's own message
    suggests `--unlock`, which would let both runs write the same files."""
    locks = folder / ".snakemake" / "locks"
    if not Path("/proc").is_dir() or not locks.is_dir() or not any(locks.iterdir()):
        return ""
    others = other_snakemake_here(folder)
    if others:
        return (f"Another snakemake run works in this folder (pid {', '.join(map(str, others))}). If Snakemake says "
                "the directory is locked, that run holds the lock: wait for it to finish or stop it (kill "
                f"{others[0]}); do not `--unlock` while it runs, or both runs write the same files.")
    for lock in locks.iterdir():
        lock.unlink()
    return "Removed a stale lock left by a killed run (no other snakemake is working here); resuming."


def abandoned(path: Path, host: str, others_here: bool) -> bool:
    """Whether a temporary file's writer is gone: its process has ended (this host), or, when the name does not
    say (an older name) or the writer ran on another host (a cluster node), when no other snakemake works here."""
    found = WRITER.search(path.name)
    if found and found["host"] == host:
        return not alive(int(found["pid"]))
    return not others_here


def remove_partial_writes(folder: Path = Path(".")) -> str:
    """Remove the temporary files of atomic writes whose writer is gone; returns the line to show."""
    partial = [p for top in PARTIAL_TOPS if (folder / top).is_dir() for p in (folder / top).rglob(".*.tmp*")]
    if not partial:
        return ""
    host, others = this_host(), bool(other_snakemake_here(folder))
    gone = [p for p in partial if abandoned(p, host, others)]
    for path in gone:
        path.unlink(missing_ok=True)
    return f"Removed {len(gone)} temporary file(s) of writes a killed run left unfinished." if gone else ""


def stop_rate_limit_timers() -> None:
    """profiles/default/config.yaml sets a rate-limit window no run reaches; Snakemake arms one timer of that
    window per scheduling pass, and they would keep the finished process alive for the hour: stop them."""
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


def report_untracked() -> str:
    """One line when any track job (this run's or an earlier one's) left records unlogged, and the command that
    logs them. Reads only the results/*/tracking.json files (no MLflow import); never fails a finished run."""
    try:
        from .tracking import console_line

        return console_line()
    except Exception as exc:  # noqa: BLE001 - a report must not turn a finished run into a failed one
        return f"MLflow: could not read results/*/tracking.json ({type(exc).__name__}: {exc})"


def declare_software(rules, env_file: str) -> None:
    """Every rule that runs a command (Snakemake's rule objects, once all are defined) declares `env_file`, the lock as
    a conda environment, so that `--software-deployment-method conda` runs its jobs there (without it nothing
    changes), and gets its own name where its command says `{rule}`: the command a job runs is the same text, and
    the rule names nothing from outside itself (`snakemake --lint`). A rule added later needs neither."""
    for rule in rules:
        if rule.shellcmd is None:
            continue
        rule.conda_env = env_file
        rule.shellcmd = rule.shellcmd.replace("{rule}", rule.name)


def say(line: str) -> None:
    if line:
        print(line, file=sys.stderr)
