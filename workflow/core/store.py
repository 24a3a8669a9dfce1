"""The MLflow store: where it is, first contact, experiments, and the tags a run carries.

Shared by the track jobs (workflow/core/tracking.py) and by a long step that logs its curves live
(TRACK_LIVE=1, Step.curve), so that changing how records are synced re-runs no step.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from .params import ROOT

DB_PATH = ROOT / "mlflow.db"
ARTIFACTS = ROOT / "mlartifacts"
# Written when the store did not answer: later track jobs and live runs of this URI skip it at once instead of
# each waiting out a timeout; `make track-sync` (retry=True) ignores it and removes it once the store answers.
MARKER = ROOT / ".cache" / "tracking-unreachable"

# Quiet, fast-failing client: no telemetry, and a server that is down or never answers fails one request in 5 s
# (connect and read timeout) with no retries and so no backoff, instead of MLflow's 120 s x 7 retries.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "0")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{DB_PATH}"


def _store_lock():
    from filelock import FileLock

    return FileLock(str(DB_PATH) + ".lock", timeout=300)


class Unreachable(RuntimeError):
    """The store failed a moment ago (its marker says so): skipped without trying."""


def marked_unreachable(marker: Path = MARKER) -> str:
    """The marker's line ('<uri> unreachable since <time>: <error>') when it is about the current store, else ''."""
    try:
        line = marker.read_text().strip()
    except OSError:
        return ""
    return line if line.split(" ", 1)[0] == tracking_uri() else ""


def is_outage(exc: BaseException) -> bool:
    """The store did not answer (refused, timed out, dropped): not an answer it gave, not a bug of ours. MLflow
    wraps the requests error of a dead server in a bare MlflowException (an answer is a RestException)."""
    import sys

    if isinstance(exc, (OSError, TimeoutError)):
        return True
    errors = sys.modules.get("mlflow.exceptions")  # not imported: no MLflow error (and a skip stays fast)
    return errors is not None and type(exc) is errors.MlflowException and "API request to" in str(exc)


def mark_unreachable(exc: BaseException, marker: Path = MARKER) -> None:
    if is_outage(exc):
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{tracking_uri()} unreachable since {time.strftime('%Y-%m-%d %H:%M:%S')}: {first}\n")


def client(marker: Path = MARKER, retry: bool = False):
    """An MlflowClient whose store is initialised exactly once, even with parallel writers.

    Raises Unreachable at once (before the 2 s MLflow import) when the marker says this store did not answer,
    unless `retry`; a first contact that finds the store down writes the marker, one that succeeds removes it.
    """
    if not retry and marked_unreachable(marker):
        raise Unreachable(marked_unreachable(marker))
    from mlflow.tracking import MlflowClient

    uri = tracking_uri()
    try:
        with _store_lock():
            c = MlflowClient(uri)
            c.search_experiments(max_results=1)  # first contact: schema creation/migration (SQLite) or a dead server
    except Exception as exc:
        mark_unreachable(exc, marker)
        raise
    if marked_unreachable(marker):
        marker.unlink(missing_ok=True)
    return c


def experiment_id(c, paper: str) -> str:
    """The paper's experiment, created on first use. The file lock orders the writers of one machine; writers on
    several machines (a cluster, one server) may still race to create it: the loser then takes the winner's."""
    with _store_lock():
        exp = c.get_experiment_by_name(paper)
        if exp is not None:
            return exp.experiment_id
        # a server keeps artifacts itself (served through it); the embedded store keeps them beside mlflow.db
        local = not tracking_uri().startswith(("http://", "https://"))
        try:
            return c.create_experiment(paper, artifact_location=(ARTIFACTS / paper).as_uri() if local else None,
                                       tags={EXPERIMENT_KIND: MODEL_TRAINING})
        except Exception as exc:
            if "RESOURCE_ALREADY_EXISTS" not in str(exc) and "already exists" not in str(exc):
                raise
            return c.get_experiment_by_name(paper).experiment_id


TAGS = ("paper", "step", "rule", "wildcards", "git_commit", "params_hash", "profile", "host")
# MLflow 3 opens an experiment in its GenAI view (traces) unless the experiment says it is model training, and its
# pages in the GenAI mode unless the URL asks for the other (the mode is kept per browser once switched by hand).
EXPERIMENT_KIND, MODEL_TRAINING = "mlflow.experimentKind", "custom_model_development"


def dashboard_url(port: int = 5000) -> str:
    """Where `make mlflow-ui` serves the experiments, in the model-training view."""
    return f"http://127.0.0.1:{port}/#/experiments?workflowType=machine_learning"


def wildcard_values(text: str) -> dict[str, str]:
    """A record's wildcards ('H=13,base=dlinear,dataset=co2,seed=0', Snakemake's form) as {name: value}."""
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def run_name(record: dict) -> str:
    """A name a user can tell apart in the runs table: the step and its wildcard values, words first, numbers with
    their name ('tta dlinear co2 H13 s0'): the rule's full name and wildcards were cut off after 40 characters."""
    values = wildcard_values(record["wildcards"])
    words = [v for k, v in sorted(values.items()) if not v.replace(".", "").isdigit()]
    numbers = [f"{'s' if k == 'seed' else k}{v}" for k, v in sorted(values.items()) if v.replace(".", "").isdigit()]
    return " ".join([record["step"], *words, *numbers])


def run_tags(record: dict) -> dict:
    """Our tags plus MLflow's own source fields, so the runs table's Source and Version columns are filled."""
    tags = {k: str(record[k]) for k in TAGS} | {"record_id": record["record_id"]}
    tags["mlflow.runName"] = run_name(record)
    tags["mlflow.source.type"] = "LOCAL"
    tags["mlflow.source.name"] = record.get("module", f"workflow.papers.{record['paper']}.{record['step']}")
    tags["mlflow.source.git.commit"] = record["git_commit"].removesuffix("-dirty")
    return tags


# ---- live curves of long steps (opt-in) ----------------------------------------------------------------

class LiveRun:
    """An MLflow run opened by a step itself (TRACK_LIVE=1) so its curves can be watched while it trains."""

    def __init__(self, record: dict):
        self.c = client()  # skips at once when a track job or another step found the store down
        try:
            self.run_id = self.c.create_run(experiment_id(self.c, record["paper"]), tags=run_tags(record),
                                            start_time=int(record["started_ms"])).info.run_id
        except Exception as exc:
            mark_unreachable(exc)
            raise

    def log(self, points: list[tuple[str, int, float]], ts: int) -> None:
        from mlflow.entities import Metric

        try:
            self.c.log_batch(self.run_id, metrics=[Metric(k, float(v), ts, int(s)) for k, s, v in points])
        except Exception as exc:  # a server gone mid-training: spare the other steps its timeout
            mark_unreachable(exc)
            raise


