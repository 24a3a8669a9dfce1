"""MLflow as a view on results/: one experiment per paper, one run per job.

Files are the truth. Every step writes a *run record* (JSON, declared as the rule's ``log.run``) holding its
tags, params, metrics, curves and artifact paths, and only then logs it to MLflow. If tracking fails the step
still succeeds (with a warning) and the record keeps ``mlflow_run_id: null``; ``python -m
workflow.core.tracking sync`` later logs every record MLflow is missing. Runs carry the record's id as a tag,
so syncing twice never duplicates a run.

Store: ``MLFLOW_TRACKING_URI`` if set (e.g. a tracking server), else an embedded SQLite database at an
absolute path in the repository. Parallel jobs on a fresh database would both run the schema migration and
one would crash, so first contact and experiment creation happen under a file lock.
"""
from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

from .io import read_json, write_json
from .params import ROOT

DB_PATH = ROOT / "mlflow.db"
ARTIFACTS = ROOT / "mlartifacts"
RECORD_GLOB = "*/logs/**/*.run.json"

# Quiet, fast-failing client: no telemetry, and an unreachable server fails in seconds instead of retrying for minutes.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{DB_PATH}"


def _client():
    """An MlflowClient whose store is initialised exactly once, even with parallel jobs."""
    from filelock import FileLock
    from mlflow.tracking import MlflowClient

    uri = tracking_uri()
    if uri.startswith("sqlite:"):
        with FileLock(str(DB_PATH) + ".lock", timeout=300):
            client = MlflowClient(uri)
            client.search_experiments(max_results=1)  # forces schema creation/migration under the lock
        return client
    return MlflowClient(uri)


def _experiment_id(client, name: str) -> str:
    from filelock import FileLock

    with FileLock(str(DB_PATH) + ".lock", timeout=300):
        exp = client.get_experiment_by_name(name)
        if exp is not None:
            return exp.experiment_id
        return client.create_experiment(name, artifact_location=(ARTIFACTS / name).as_uri())


def _flatten(tree, prefix=""):
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: tree}


def _find_run(client, experiment_id: str, record_id: str):
    runs = client.search_runs([experiment_id], filter_string=f"tags.record_id = '{record_id}'", max_results=1)
    return runs[0].info.run_id if runs else None


def log_record(record: dict) -> str:
    """Log one run record to MLflow (idempotent on record_id); returns the run id."""
    from mlflow.entities import Metric, Param

    client = _client()
    exp_id = _experiment_id(client, record["paper"])
    existing = _find_run(client, exp_id, record["record_id"])
    if existing:
        return existing
    tags = {k: str(record[k]) for k in ("paper", "step", "rule", "wildcards", "git_commit", "params_hash", "profile", "host")}
    tags["record_id"] = record["record_id"]
    tags["mlflow.runName"] = f"{record['rule']}[{record['wildcards']}]" if record["wildcards"] else record["rule"]
    run = client.create_run(exp_id, tags=tags, start_time=int(record["started_ms"]))
    run_id = run.info.run_id
    ts = int(record["started_ms"])
    params = [Param(k[:250], json.dumps(v) if not isinstance(v, str) else v) for k, v in _flatten(record["params"]).items()]
    metrics = [Metric(k, float(v), ts, 0) for k, v in record["metrics"].items() if v is not None]
    for name, points in record["curves"].items():  # curves go in batches, not one call per point
        metrics += [Metric(name, float(v), ts, int(s)) for s, v in points]
    for i in range(0, max(len(params), 1), 100):
        client.log_batch(run_id, params=params[i:i + 100])
    for i in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[i:i + 1000])
    for path in record["artifacts"]:
        full = ROOT / path
        if full.exists():
            client.log_artifact(run_id, str(full))
    client.set_terminated(run_id, "FINISHED", end_time=ts + int(1000 * record["seconds"]))
    return run_id


def log_record_safely(record: dict, record_path: Path) -> None:
    """Log and store the run id in the record; a tracking failure only warns (sync can redo it)."""
    try:
        record["mlflow_run_id"] = log_record(record)
    except Exception as exc:  # noqa: BLE001 - any tracking failure must not fail the step
        warnings.warn(f"MLflow tracking failed ({type(exc).__name__}: {exc}); the result is safe in {record_path}. "
                      "Run `make track-sync` (python -m workflow.core.tracking sync) once tracking is back.")
        record["mlflow_run_id"] = None
    write_json(record_path, record)


def sync(results: Path = ROOT / "results") -> tuple[int, int]:
    """Log every run record MLflow is missing. Returns (records seen, runs created)."""
    client = None
    seen = created = 0
    for path in sorted(results.glob(RECORD_GLOB)):
        record = read_json(path)
        seen += 1
        client = client or _client()
        run_id = record.get("mlflow_run_id")
        if run_id:
            try:
                client.get_run(run_id)
                continue
            except Exception:  # noqa: BLE001 - the run is gone (e.g. a new database): log it again
                pass
        before = _find_run(client, _experiment_id(client, record["paper"]), record["record_id"])
        record["mlflow_run_id"] = before or log_record(record)
        created += before is None
        write_json(path, record)
    return seen, created


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["sync", "uri"], help="sync: log what MLflow is missing; uri: print the store URI")
    args = parser.parse_args(argv)
    if args.command == "uri":
        print(tracking_uri())
        return 0
    seen, created = sync()
    print(f"{seen} run records in results/, {created} runs logged to {tracking_uri()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
