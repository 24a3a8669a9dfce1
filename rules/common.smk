# Helpers every rule file uses. Every rule has the same parts, in the same order:
#   input (data, then code=code(...), params=reads(...)), output, log: **logs(...), benchmark, threads,
#   resources: **measured(rule), shell: step(...)
# A paper's target rule and its evaluate and plot rules are `localrules:` (seconds each, reading many files: on a
# cluster they run where snakemake runs instead of waiting in the queue).
# Code and values reach Snakemake as stamp files (workflow/core/stamps.py), never as `params:`.
import os
import sys
from functools import lru_cache
from pathlib import Path

from workflow.core import resources, stamps

# Each paper's rule file registers the figures its plot step makes; the report embeds them.
FIGURES = {}

# One path segment per wildcard, and nothing a shell would interpret.
wildcard_constraints:
    dataset="[A-Za-z0-9_.]+",
    name="[A-Za-z0-9_.]+",
    seed="[0-9]+",


@lru_cache(maxsize=None)
def params_stamp(name):
    return stamps.params(PARAMS, name)


def reads(*sections):
    """input: the params.yaml sections a job reads ('{wildcard}' allowed), as stamps of their values.

    A change re-runs exactly these jobs; the step gets the section names (--params) and reads the same values
    itself; the dvc.yaml generator lists their keys. Sections without wildcards are stamped once, here.
    """
    if not any("{" in s for s in sections):
        return [params_stamp(s) for s in sections]
    return lambda wildcards: [params_stamp(s.format(**wildcards)) for s in sections]


def derived(name, value, *sections):
    """input: a value one job derives from params sections (a function of its wildcards), as a stamp, for a value
    the step computes itself from those sections: a change elsewhere in them does not re-run the job."""

    def stamp(wildcards):
        key = "_".join(map(str, wildcards))
        return stamps.derived(name, key, value(wildcards), list(sections))

    return stamp


MEASURED = resources.load()


def measured(rule):
    """resources: what the rule's jobs used in a measured default run, with headroom (workflow/resources.yaml,
    refreshed by `make resources`); a cluster job asks for this, not a site default."""
    return MEASURED.get(rule, resources.FALLBACK)


def logs(paper, step, job="all"):
    """log: the job's console output and its run record (the truth MLflow mirrors)."""
    return dict(out=f"results/{paper}/logs/{step}/{job}.log", run=f"results/{paper}/logs/{step}/{job}.run.json")


def bench(paper, step, job="all"):
    return f"results/{paper}/bench/{step}/{job}.tsv"


def code(paper, step):
    """input: the code a job runs, as one stamp: its step module and every module under workflow/ that it
    imports, directly or not (read from the source by workflow/core/imports.py, never a hand-kept list), with
    their hashes, so that editing any of them re-runs exactly the jobs whose steps import it (and a mere `touch`
    re-runs nothing). Shared steps name no paper: code(None, "core.fetch")."""
    return stamps.code(f"workflow.papers.{paper}.{step}" if paper else f"workflow.{step}")


def step(module, args=""):
    """The one shape of every job's command: the step program, its own arguments, the common ones. workflow/run.py
    runs it: output to the log, its `warning:` lines (or a failed job's last lines) repeated on the console."""
    return (
        f"python -m workflow.run {module} {args} --profile {PROFILE} --params {{input.params}} "
        "--rule {rule} --wildcards '{wildcards}' --log {log.out:q} --record {log.run:q}"
    )


def snakemake_running_here():
    """Whether another snakemake process (not this one, not one of its parents) works in this directory."""
    mine, pid = set(), os.getpid()
    while pid > 1:  # this process and its parents (`make reproduce`, a shell `snakemake ...` ran from)
        mine.add(pid)
        try:
            pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    here = os.getcwd()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            argv = open(f"/proc/{entry.name}/cmdline", "rb").read().split(b"\0")
            if any(b"snakemake" in a for a in argv[:2]) and os.readlink(f"/proc/{entry.name}/cwd") == here:
                return True
        except OSError:  # gone, or not ours to read
            continue
    return False


def clear_stale_lock():
    """A killed run (kill -9, a closed laptop) leaves Snakemake's lock behind, and every later run would stop until
    `snakemake --unlock`. The lock is stale when no other snakemake works in this directory: then it is removed,
    so `make reproduce` simply resumes (a second run started beside a live one still stops on the lock)."""
    locks = Path(".snakemake/locks")
    if not os.path.isdir("/proc") or not locks.is_dir() or not any(locks.iterdir()) or snakemake_running_here():
        return
    for lock in locks.iterdir():
        lock.unlink()
    print("Removed a stale lock left by a killed run (no other snakemake is working here); resuming.", file=sys.stderr)


def remove_partial_writes():
    """An atomic write (workflow/core/io.py, stamps) writes to a hidden temporary file and renames it; a job
    killed in between leaves the temporary file (hundreds of MB for a checkpoint). Nothing is writing now: this
    run holds the lock."""
    partial = [p for top in ("results", ".cache") if os.path.isdir(top) for p in Path(top).rglob(".*.tmp*")]
    for path in partial:
        path.unlink(missing_ok=True)
    if partial:
        print(f"Removed {len(partial)} temporary file(s) of writes a killed run left unfinished.", file=sys.stderr)


clear_stale_lock()


# profiles/default/config.yaml sets a rate-limit window no run reaches (Snakemake's 1 s window re-checked every
# waiting job each second, half a core during a default run). Snakemake arms one timer of that window per
# scheduling pass, and they would keep the finished process alive for the hour: stop them when the run ends.
def stop_rate_limit_timers(log=None):
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


# A tracking outage never fails the run, but it is never silent either: one line on the console when any track
# job (this run's or an earlier one's) left records unlogged, and the command that logs them. Reads only the
# results/*/tracking.json files (no MLflow import).
def report_untracked():
    try:
        from workflow.core.tracking import console_line

        line = console_line()
    except Exception as exc:  # noqa: BLE001 - a report must not turn a finished run into a failed one
        line = f"MLflow: could not read results/*/tracking.json ({type(exc).__name__}: {exc})"
    if line:
        print(line, file=sys.stderr)


onstart:
    remove_partial_writes()


onsuccess:
    stop_rate_limit_timers()
    report_untracked()


onerror:
    stop_rate_limit_timers()
    report_untracked()
