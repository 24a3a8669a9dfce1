# Helpers every paper's .smk file uses (it defines no rules of its own). Each rule's parts, always in this order:
#   input (data, then stamp=stamp(<step module>)), output, log: **logs(...), benchmark, threads,
#   resources: **measured(<its name>), shell: step(...)
# A paper's target, evaluate and plot rules are `localrules:` (seconds each, reading many files: on a cluster they
# run where snakemake runs instead of waiting in the queue).
# Code and values reach Snakemake as stamp files (workflow/core/stamps.py), never as `params:`. The software
# environment and the name in a command's `--rule` are filled in once for all rules (end of the Snakefile).
import os
import re
from functools import lru_cache
from pathlib import Path

from workflow.core import declared as declared_mod, housekeeping, resources, stamps, zygote
from workflow.core.params import ParamsError

# Each paper's rule file registers the figures its plot step makes; the report embeds them.
FIGURES = {}

# One path segment per wildcard, and nothing a shell would interpret.
wildcard_constraints:
    dataset="[A-Za-z0-9_.]+",
    name="[A-Za-z0-9_.]+",
    seed="[0-9]+",


def stamp(module, derived=None):
    """input: everything a job of the step module depends on that is not a file, as one stamp
    (workflow/core/stamps.py): its code, the module and every module under workflow/ that it imports, directly or
    not (read from the source by workflow/core/imports.py, never a hand-kept list), with their hashes; and the
    values of the params.yaml sections it declares it reads (its READS, read from its source by
    workflow/core/declared.py: the step is the one place that says it, and it checks it was given exactly these).
    Editing a module or a value re-runs exactly the jobs that run or read it (a mere `touch` re-runs nothing).

    derived: a value the job's step computes itself from its PLAN_READS sections (a function of the wildcards,
    e.g. the methods one cell runs), stamped in their place: a change elsewhere in them does not re-run the job.
    Shared steps name no paper: stamp("core.fetch")."""
    sections = declared_mod.declaration(module)["READS"]
    varying = sorted({name for s in sections for name in re.findall(r"{(\w+)}", s)})
    if not varying and derived is None:
        return job_stamp(module, sections)
    if derived is None:  # one stamp per value of the wildcards the sections name (a data set), not one per job
        return lambda w: job_stamp(module, tuple(s.format(**w) for s in sections),
                                   "_".join(getattr(w, name) for name in varying))
    return lambda w: stamps.job(PARAMS, f"workflow.{module}", [s.format(**w) for s in sections], "_".join(map(str, w)),
                                derived(w))


@lru_cache(maxsize=None)
def job_stamp(module, sections, key=""):
    return stamps.job(PARAMS, f"workflow.{module}", list(sections), key)


def check_plan(plan, section):
    """A paper's own consistency check of its params section (its plan module's `check`), run before any job: an
    inconsistency stops the run as a schema error does, with its message and no traceback."""
    try:
        plan.check(section)
    except ParamsError as err:
        raise WorkflowError(str(err)) from None


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


def step(module, args=""):
    """The one shape of every job's command: the step program, its own arguments, the common ones. workflow/run.py
    runs it: output to the log, its `warning:` lines (or a failed job's last lines) repeated on the console."""
    return (
        f"bin/python -m workflow.run {module} {args} --profile {PROFILE} --params {{input.stamp}} "
        "--rule {rule} "  # the rule's own name, written in by housekeeping.declare_software
        "--wildcards '{wildcards}' --log {log.out:q} --record {log.run:q}"
    )


# The locked environment (requirements.lock) as a conda environment file (workflow/tools/condaenv.py writes it):
# the Snakefile's last line declares it on every rule (housekeeping.declare_software).
SOFTWARE = os.path.join(workflow.basedir, "workflow", "envs", "repro.yaml")


# Before any job: a stale lock (a killed run's) goes, and so do the temporary files of writes whose writer is gone;
# after the run: Snakemake's idle timers stop, and a tracking outage is one line (workflow/core/housekeeping.py).
housekeeping.say(housekeeping.clear_stale_lock())


# A local run's jobs fork from one warm interpreter, their libraries imported once (workflow/core/zygote.py); jobs
# on a cluster's nodes, --touch runs and `--config zygote=off` runs start their own interpreters.
ZYGOTE = {}


onstart:
    housekeeping.say(housekeeping.remove_partial_writes())
    if workflow.local_exec and not workflow.touch and config.get("zygote", "on") != "off":
        ZYGOTE["process"] = zygote.start(sys.executable, Path(".snakemake/zygote.log"))


onsuccess:
    zygote.stop(ZYGOTE.get("process"))
    housekeeping.stop_rate_limit_timers()
    housekeeping.say(housekeeping.report_untracked())


onerror:
    zygote.stop(ZYGOTE.get("process"))
    housekeeping.stop_rate_limit_timers()
    housekeeping.say(housekeeping.report_untracked())
