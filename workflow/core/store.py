"""The MLflow store: where it is, first contact, experiments, and the tags a run carries.

Shared by the track jobs (workflow/core/tracking.py) and by a long step that logs its curves live
(TRACK_LIVE=1, Step.curve), so that changing how records are synced re-runs no step.
"""
from __future__ import annotations

import os

from .params import ROOT

DB_PATH = ROOT / "mlflow.db"
ARTIFACTS = ROOT / "mlartifacts"

# Quiet, fast-failing client: no telemetry, and an unreachable server fails in seconds instead of retrying.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{DB_PATH}"


def _store_lock():
    from filelock import FileLock

    return FileLock(str(DB_PATH) + ".lock", timeout=300)


def client():
    """An MlflowClient whose store is initialised exactly once, even with parallel writers."""
    from mlflow.tracking import MlflowClient

    uri = tracking_uri()
    with _store_lock():
        c = MlflowClient(uri)
        c.search_experiments(max_results=1)  # first contact: schema creation/migration (SQLite) or a dead server
    return c


def experiment_id(c, paper: str) -> str:
    with _store_lock():
        exp = c.get_experiment_by_name(paper)
        if exp is not None:
            return exp.experiment_id
        return c.create_experiment(paper, artifact_location=(ARTIFACTS / paper).as_uri())


TAGS = ("paper", "step", "rule", "wildcards", "git_commit", "params_hash", "profile", "host")


def run_tags(record: dict) -> dict:
    """Our tags plus MLflow's own source fields, so the runs table's Source and Version columns are filled."""
    tags = {k: str(record[k]) for k in TAGS} | {"record_id": record["record_id"]}
    tags["mlflow.runName"] = f"{record['rule']}[{record['wildcards']}]" if record["wildcards"] else record["rule"]
    tags["mlflow.source.type"] = "LOCAL"
    tags["mlflow.source.name"] = record.get("module", f"workflow.papers.{record['paper']}.{record['step']}")
    tags["mlflow.source.git.commit"] = record["git_commit"].removesuffix("-dirty")
    tags |= {f"env.{k}": str(v) for k, v in record.get("environment", {}).items()}  # python, lock hash, CPU, torch
    return tags


# ---- live curves of long steps (opt-in) ----------------------------------------------------------------

class LiveRun:
    """An MLflow run opened by a step itself (TRACK_LIVE=1) so its curves can be watched while it trains."""

    def __init__(self, record: dict):
        self.c = client()
        self.run_id = self.c.create_run(experiment_id(self.c, record["paper"]), tags=run_tags(record),
                                        start_time=int(record["started_ms"])).info.run_id

    def log(self, points: list[tuple[str, int, float]], ts: int) -> None:
        from mlflow.entities import Metric

        self.c.log_batch(self.run_id, metrics=[Metric(k, float(v), ts, int(s)) for k, s, v in points])


