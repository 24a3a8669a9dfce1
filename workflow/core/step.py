"""The shared shell of every step program: arguments, parameters, threads, seeds, run record, tracking.

A step module is a few pure functions plus a thin ``main``, and says near its top which params.yaml sections it
reads (workflow/core/declared.py; its rule stamps their values from there: ``stamp=stamp("papers.cosa.tta")``)::

    READS = ("cosa.datasets.{dataset}.lookback", "cosa.tta")   # the rule's wildcards

    step = Step("cosa", "tta", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    args, p = step.start(argv)          # p: the READS sections' values, one flat read-only view (declared.Params)
    p["lookback"], p.lookback           # the same int params.yaml holds; a key of no READS section is an error
    ...                                 # compute, write declared outputs atomically
    step.curve("loss", epoch, value)     # optional: a curve point (live in MLflow with TRACK_LIVE=1)
    step.finish(metrics={...}, curves={...}, artifacts=[...])

``step.values`` holds each declared section by name, ``step.subtree("lnsp")`` the declared sections under a
prefix, nested as in params.yaml, for a paper's plan functions. No step sees the whole tree.

Every rule passes the same trailing arguments (see rules/common.smk): --profile, --params (the sections it
reads, as their stamps' paths: its step's READS, checked here), --rule, --wildcards, --record (the run record,
declared as the rule's log.run).
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

from . import declared
from . import params as params_mod
from . import stamps
from .io import sha256, write_json
from .params import ROOT


def git_commit() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            return next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "unknown")
    except OSError:
        return platform.processor() or "unknown"


def environment() -> dict:
    """What a result may depend on besides code, data and params, so that two runs that differ can be told apart:
    the interpreter, the exact package set (requirements.lock's hash), the CPU, and torch's CPU kernel level and
    threads where the step uses torch (float results can differ between AVX2 and AVX-512 kernels)."""
    lock = ROOT / "requirements.lock"
    env = {"python": platform.python_version(), "machine": platform.machine(), "cpu": cpu_model(),
           "lock_sha256": sha256(lock)[:16] if lock.exists() else "none",
           "blas_coretype": os.environ.get("OPENBLAS_CORETYPE", "auto")}  # pinned in workflow/__init__.py
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        env |= {"torch": torch.__version__, "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
                "torch_threads": torch.get_num_threads()}
    return env


def own_usage() -> dict:
    """This process's peak memory and CPU time. Snakemake's benchmark file measures the job's process tree, which
    does not hold a job forked from the zygote (workflow/core/zygote.py): the record keeps what the step used."""
    import resource

    return {"max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "cpu_seconds": round(time.process_time(), 3)}


def one_thread() -> None:
    """One torch thread per job (BLAS threads are pinned in workflow/__init__.py, before numpy loads)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def seed_everything(seed: int) -> None:
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def relative(path) -> str:
    path = Path(path).resolve()
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


LIVE_FLUSH_SECONDS = 5  # TRACK_LIVE=1: how often a long step sends its new curve points to MLflow


def path_arguments(args: argparse.Namespace) -> list[Path]:
    """Every Path among a step's parsed arguments (single or lists)."""
    out = []
    for value in vars(args).values():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, Path):
                out.append(v)
    return out


class Step:
    verify_raw = True  # check data/raw/ arguments against the catalog at start; off for fetch, which writes them

    def __init__(self, paper: str, name: str, doc: str | None = None):
        self.paper, self.name = paper, name
        self.parser = argparse.ArgumentParser(prog=f"{paper}.{name}", description=(doc or "").strip().split("\n")[0])
        common = self.parser.add_argument_group("common to every step")
        common.add_argument("--profile", default="default", help="parameter profile (profiles/<name>)")
        common.add_argument("--params", nargs="*", default=[], metavar="SECTION",
                            help="the params.yaml sections this step reads (names, or its job stamp's path)")
        common.add_argument("--rule", default=f"{paper}_{name}", help="the Snakemake rule (MLflow tag)")
        common.add_argument("--wildcards", default="", help="the job's wildcards (MLflow tag)")
        common.add_argument("--record", type=Path, help="where to write the run record (the rule's log.run)")
        self.started = time.time()
        module = sys._getframe(1).f_globals  # the step module's globals: its name (also when run as __main__), its READS
        self.module = module["__spec__"].name if module.get("__spec__") else f"workflow.papers.{paper}.{name}"
        self.reads, self.plan_reads = module.get("READS"), tuple(module.get("PLAN_READS", ()))
        self.record_id = uuid.uuid4().hex
        self.curves: dict[str, list] = {}
        self._pending, self._flushed, self._live = [], time.time(), None

    def start(self, argv=None):
        one_thread()
        self.args = self.parser.parse_args(argv)
        tree = params_mod.load(self.args.profile)
        names = [n for arg in self.args.params for s in arg.split(",") if s for n in stamps.section_names(s)]
        if self.reads is None:
            raise params_mod.ParamsError(f"{self.module} declares no READS: add `READS = (...)` near its top, the "
                                         "params.yaml sections it reads (workflow/core/declared.py)")
        declared.check_given(self.module, self.reads, names)
        self.values = params_mod.sections(tree, names + [n for n in self.plan_reads if n not in names])
        self.p = declared.view({name: self.values[name] for name in names}, self.module)
        self._existing_at_start = sorted({relative(p) for p in path_arguments(self.args) if p.is_file()})
        raw = [ROOT / p for p in self._existing_at_start if p.startswith("data/raw/")]
        if raw and self.verify_raw:  # a truncated or edited catalog file ends the job here, not half-read
            from .fetch import verify_step_inputs  # only jobs that read catalog files import it

            verify_step_inputs(raw)
        self.compute_started = time.time()  # from here on: the step's own work (bench/job_overhead.py)
        self.log(f"start {self.args.rule} [{self.args.wildcards}] profile={self.args.profile} params={names}")
        return self.args, self.p

    def subtree(self, prefix: str) -> declared.Params:
        """The declared sections (READS and PLAN_READS) under `prefix`, nested as in params.yaml: what a paper's plan
        functions take ({'soft_qd.seeds': s, ...} -> {'seeds': s, ...})."""
        return declared.subtree(self.values, prefix, self.module)

    @staticmethod
    def log(message: str) -> None:
        """Progress line in the job's log (stdout is redirected there by the rule)."""
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    def curve(self, name: str, step: int, value: float) -> None:
        """One point of a training curve. It goes to the run record at finish; with TRACK_LIVE=1 a long step
        also sends its points to MLflow every few seconds, so the curve can be watched while it trains."""
        self.curves.setdefault(name, []).append((int(step), float(value)))
        if os.environ.get("TRACK_LIVE") == "1":
            self._live_point(name, step, value)

    def _live_point(self, name: str, step: int, value: float) -> None:
        self._pending.append((name, int(step), float(value)))
        if time.time() - self._flushed < LIVE_FLUSH_SECONDS:
            return
        try:
            if self._live is None:
                from .store import LiveRun

                self._live = LiveRun(self.record(metrics={}, curves={}))
            self._live.log(self._pending, int(1000 * time.time()))
        except Exception as exc:  # noqa: BLE001 - live tracking is a view; the record stays the truth
            self.log(f"live tracking off ({type(exc).__name__}); the curve is kept for the run record")
            os.environ["TRACK_LIVE"] = "0"
        self._pending, self._flushed = [], time.time()

    def record(self, metrics: dict | None = None, curves: dict | None = None, artifacts=(), outputs=()) -> dict:
        """The run record: everything MLflow shows of this job, written as a file first."""
        curves = {**self.curves, **(curves or {})}
        return {
            "record_id": self.record_id,
            "paper": self.paper,
            "step": self.name,
            "module": self.module,
            "rule": self.args.rule,
            "wildcards": self.args.wildcards,
            "profile": self.args.profile,
            "git_commit": git_commit(),
            "params_hash": params_mod.params_hash(self.values),
            "host": platform.node(),
            "environment": environment(),
            "params": self.values,
            "metrics": {k: (None if v is None else float(v)) for k, v in (metrics or {}).items()},
            "curves": {k: [[int(s), float(v)] for s, v in pts] for k, pts in curves.items()},
            "inputs": self.inputs(outputs),
            "artifacts": [relative(a) for a in artifacts],
            "outputs": [relative(o) for o in outputs],
            "started_ms": int(1000 * self.started),
            "seconds": round(time.time() - self.started, 3),
            "compute_seconds": round(time.time() - self.compute_started, 3),
            **own_usage(),
            "mlflow_run_id": self._live.run_id if self._live else None,
        }

    def inputs(self, outputs=()) -> list[str]:
        """The files this job read: its path arguments that existed when it started (outputs left out)."""
        outs = {relative(o) for o in outputs}
        return sorted(p for p in self._existing_at_start if p not in outs)

    def finish(self, metrics: dict | None = None, curves: dict | None = None, artifacts=(), outputs=()) -> dict:
        """Write the run record (the truth). MLflow is not touched here: the paper's track job logs it."""
        record = self.record(metrics, curves, artifacts, outputs)
        shown = [f"{k}={v:.4g}" for k, v in record["metrics"].items() if v is not None][:12]  # a readable line
        self.log(f"done in {record['seconds']:.1f}s " + " ".join(shown))
        if self.args.record:
            write_json(self.args.record, record)
        return record
