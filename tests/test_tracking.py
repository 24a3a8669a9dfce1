"""A tracking outage loses no result; sync re-logs what MLflow is missing, exactly once."""
import json

from conftest import ROOT, env, run


def test_outage_then_sync_without_duplicates(tmp_path):
    results = tmp_path / "results"
    record = results / "data" / "logs" / "fetch" / "co2.run.json"
    outage = env() | {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}  # nothing listens there
    done = run(["python", "-m", "workflow.core.fetch", "co2", str(tmp_path / "co2.csv"), "--record", str(record)],
               ROOT, env=outage)
    assert (tmp_path / "co2.csv").exists()
    assert "MLflow tracking failed" in done.stderr + done.stdout
    assert json.loads(record.read_text())["mlflow_run_id"] is None

    store = env() | {"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    code = ("import sys; from pathlib import Path; from workflow.core.tracking import sync; "
            "print(*sync(Path(sys.argv[1])))")
    first = run(["python", "-c", code, str(results)], ROOT, env=store).stdout.split()
    second = run(["python", "-c", code, str(results)], ROOT, env=store).stdout.split()
    assert first == ["1", "1"] and second == ["1", "0"]
    run_id = json.loads(record.read_text())["mlflow_run_id"]
    check = ("import sys; from mlflow.tracking import MlflowClient; c = MlflowClient(sys.argv[1]); "
             "e = c.get_experiment_by_name('data'); r = c.search_runs([e.experiment_id]); "
             "print(len(r), r[0].info.run_id, r[0].data.tags['step'], r[0].info.status)")
    out = run(["python", "-c", check, store["MLFLOW_TRACKING_URI"]], ROOT, env=store).stdout.split()
    assert out == ["1", run_id, "fetch", "FINISHED"]
