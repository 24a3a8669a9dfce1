"""Tracking stays out of the jobs' way, an outage loses no result, and sync logs each record exactly once."""
import json

from conftest import ROOT, env, run

SYNC = ("import sys; from pathlib import Path; from workflow.core.tracking import sync; "
        "r = sync(results=Path(sys.argv[1])); print(r.seen, r.logged, len(r.untracked), r.duplicates_removed + r.replaced); "
        "print(r.line(), file=sys.stderr)")
RUNS = ("import sys, json; from mlflow.tracking import MlflowClient; c = MlflowClient(sys.argv[1]); "
        "e = c.get_experiment_by_name('data'); rs = c.search_runs([e.experiment_id]); r = rs[0]; "
        "print(json.dumps(dict(n=len(rs), id=r.info.run_id, status=r.info.status, step=r.data.tags['step'], "
        "source=r.data.tags['mlflow.source.name'], datasets=[(d.dataset.name, d.dataset.digest) for d in r.inputs.dataset_inputs], "
        "note=e.tags.get('mlflow.note.content'))))")


def fetch_co2(tmp_path):
    record = tmp_path / "results" / "data" / "logs" / "fetch" / "co2.run.json"
    probe = ("import runpy, sys; sys.argv = ['fetch', 'co2', sys.argv[1], '--record', sys.argv[2]]; "
             "exec('try: runpy.run_module(\\'workflow.core.fetch\\', run_name=\\'__main__\\')\\nexcept SystemExit: pass'); "
             "print('mlflow' in sys.modules)")
    done = run(["python", "-c", probe, str(tmp_path / "data/raw/co2.csv"), str(record)], ROOT)
    return record, done.stdout.strip().splitlines()[-1]


def test_a_job_never_imports_mlflow_and_leaves_a_record(tmp_path):
    record, mlflow_loaded = fetch_co2(tmp_path)
    assert mlflow_loaded == "False"
    rec = json.loads(record.read_text())
    assert rec["mlflow_run_id"] is None and rec["module"] == "workflow.core.fetch"


def test_outage_then_sync_without_duplicates(tmp_path):
    record, _ = fetch_co2(tmp_path)
    results = tmp_path / "results"
    outage = env() | {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}  # nothing listens there
    done = run(["python", "-c", SYNC, str(results)], ROOT, env=outage)
    assert done.stdout.split() == ["1", "0", "1", "0"] and "make track-sync" in done.stderr

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    store = env() | {"MLFLOW_TRACKING_URI": uri}
    assert run(["python", "-c", SYNC, str(results)], ROOT, env=store).stdout.split() == ["1", "1", "0", "0"]
    assert run(["python", "-c", SYNC, str(results)], ROOT, env=store).stdout.split() == ["1", "0", "0", "0"]
    got = json.loads(run(["python", "-c", RUNS, uri], ROOT, env=store).stdout)
    assert got["n"] == 1 and got["id"] == json.loads(record.read_text())["mlflow_run_id"]
    assert (got["status"], got["step"], got["source"]) == ("FINISHED", "fetch", "workflow.core.fetch")
    catalog = __import__("yaml").safe_load((ROOT / "workflow/catalog.yaml").read_text())
    assert got["datasets"] == [["co2", catalog["datasets"]["co2"]["sha256"][:16]]]


def test_sync_replaces_an_unfinished_run_and_removes_duplicates(tmp_path):
    record, _ = fetch_co2(tmp_path)
    results = tmp_path / "results"
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    store = env() | {"MLFLOW_TRACKING_URI": uri}
    run(["python", "-c", SYNC, str(results)], ROOT, env=store)
    rec = json.loads(record.read_text())
    # a killed sync leaves a RUNNING copy; a second copy of a finished run appears (e.g. two stores merged)
    orphan = ("import sys; from mlflow.tracking import MlflowClient; c = MlflowClient(sys.argv[1]); "
              "e = c.get_experiment_by_name('data'); c.create_run(e.experiment_id, tags={'record_id': sys.argv[2]})")
    run(["python", "-c", orphan, uri, rec["record_id"]], ROOT, env=store)
    assert run(["python", "-c", SYNC, str(results)], ROOT, env=store).stdout.split() == ["1", "0", "0", "1"]
    got = json.loads(run(["python", "-c", RUNS, uri], ROOT, env=store).stdout)
    assert got["n"] == 1 and got["id"] == rec["mlflow_run_id"] and got["status"] == "FINISHED"
