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


# ---- runs that lie, duplicates, a store that never answers -------------------------------------------------

SYNC_CLI = ["python", "-m", "workflow.core.tracking", "sync", "--paper", "data"]
# every run of the 'data' experiment: id, status, metric and param keys
ALL_RUNS = ("import sys, json; from mlflow.tracking import MlflowClient; c = MlflowClient(sys.argv[1]); "
            "e = c.get_experiment_by_name('data'); print(json.dumps([dict(id=r.info.run_id, status=r.info.status, "
            "metrics=sorted(r.data.metrics), params=sorted(r.data.params)) for r in c.search_runs([e.experiment_id])]))")
# what a killed job or an interrupted sync leaves: a run of the record, RUNNING, with only its first metric;
# 'twice' logs the record as two complete FINISHED runs instead (a sync re-run after it was killed at the end)
LEFTOVER = ("import sys, json; from workflow.core import tracking, store; c = store.client(retry=True); "
            "rec = json.load(open(sys.argv[1])); e = store.experiment_id(c, 'data'); "
            "ids = [tracking.log_record(c, e, rec, {}) for _ in range(2)] if sys.argv[2] == 'twice' else "
            "[c.create_run(e, tags=store.run_tags(rec)).info.run_id]; "
            "sys.argv[2] == 'half' and c.log_metric(ids[0], 'bytes', 1.0); print(ids[0])")


def two_metric_record(tmp_path):
    """The fetch record with a second metric and a param, so that a run can hold half of them."""
    record, _ = fetch_co2(tmp_path)
    rec = json.loads(record.read_text())
    rec["metrics"]["rows"], rec["params"] = 468.0, {"fetch": {"retries": 3}}
    record.write_text(json.dumps(rec))
    return record, tmp_path / "results", env() | {"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}


def sync_cli(results, store, *extra):
    return run([*SYNC_CLI, "--results", str(results), *extra], ROOT, env=store)


def test_sync_completes_a_run_left_running_with_half_its_metrics(tmp_path):
    record, results, store = two_metric_record(tmp_path)
    uri = store["MLFLOW_TRACKING_URI"]
    # an interrupted sync: the record does not name the run, which is replaced
    stale = run(["python", "-c", LEFTOVER, str(record), "half"], ROOT, env=store).stdout.strip()
    assert "1 newly logged" in sync_cli(results, store).stdout
    runs = json.loads(run(["python", "-c", ALL_RUNS, uri], ROOT, env=store).stdout)
    rec = json.loads(record.read_text())
    env = [f"env.{k}" for k in rec["environment"]]  # the run carries its environment (python, lock hash, CPU)
    assert [(r["status"], r["metrics"], r["params"]) for r in runs] == [("FINISHED", ["bytes", "rows"],
                                                                          sorted(env + ["fetch.retries"]))]
    assert "env.lock_sha256" in env and runs[0]["id"] == rec["mlflow_run_id"] != stale and rec["mlflow_tracked_in"] == uri
    # a live run of the record (TRACK_LIVE): the record names it, and sync completes that same run
    run(["python", "-c", "import sys; from mlflow.tracking import MlflowClient; MlflowClient(sys.argv[1]).delete_run(sys.argv[2])",
         uri, rec["mlflow_run_id"]], ROOT, env=store)
    live = run(["python", "-c", LEFTOVER, str(record), "half"], ROOT, env=store).stdout.strip()
    record.write_text(json.dumps(rec | {"mlflow_run_id": live}))
    assert "1 newly logged" in sync_cli(results, store).stdout
    runs = json.loads(run(["python", "-c", ALL_RUNS, uri], ROOT, env=store).stdout)
    assert [(r["id"], r["status"], r["metrics"]) for r in runs] == [(live, "FINISHED", ["bytes", "rows"])]


def test_duplicate_runs_of_a_record_become_one_and_a_second_sync_changes_nothing(tmp_path):
    record, results, store = two_metric_record(tmp_path)
    uri = store["MLFLOW_TRACKING_URI"]
    run(["python", "-c", LEFTOVER, str(record), "twice"], ROOT, env=store)
    run(["python", "-c", LEFTOVER, str(record), "half"], ROOT, env=store)
    assert len(json.loads(run(["python", "-c", ALL_RUNS, uri], ROOT, env=store).stdout)) == 3
    first = sync_cli(results, store).stdout
    assert "0 newly logged" in first and "0 incomplete runs replaced, 2 duplicates removed" in first
    runs = json.loads(run(["python", "-c", ALL_RUNS, uri], ROOT, env=store).stdout)
    assert [r["id"] for r in runs] == [json.loads(record.read_text())["mlflow_run_id"]]
    before = record.read_text(), record.stat().st_mtime_ns
    again = sync_cli(results, store).stdout
    assert "0 newly logged" in again and "0 incomplete runs replaced, 0 duplicates removed" in again
    assert (record.read_text(), record.stat().st_mtime_ns) == before
    assert json.loads(run(["python", "-c", ALL_RUNS, uri], ROOT, env=store).stdout) == runs


def test_a_server_that_never_answers_costs_one_timeout_then_nothing(tmp_path, monkeypatch):
    import socket
    import time

    from workflow.core.tracking import console_line

    record, _ = fetch_co2(tmp_path)
    results, marker = tmp_path / "results", tmp_path / ".cache" / "tracking-unreachable"
    with socket.socket() as server:  # accepts TCP connections (the kernel's backlog) and never says a word
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        uri = f"http://127.0.0.1:{server.getsockname()[1]}"
        hung = env() | {"MLFLOW_TRACKING_URI": uri}
        out = results / "data" / "tracking.json"
        seconds = []
        for _ in range(2):  # two papers' track jobs, one after the other
            start = time.time()
            done = run([*SYNC_CLI, "--results", str(results), "--out", str(out)], ROOT, env=hung)
            seconds.append(time.time() - start)
            summary = json.loads(out.read_text())
            assert done.returncode == 0 and "make track-sync" in done.stderr
            assert (summary["untracked"], summary["untracked_records"]) == (1, ["results/data/logs/fetch/co2.run.json"])
            assert marker.read_text().startswith(f"{uri} unreachable since ")
    assert sum(seconds) < 20 and seconds[1] < 3, seconds  # the second skips without importing MLflow
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    line = console_line(results)
    assert line.startswith("MLflow: 1 run record(s) not tracked") and "`make track-sync`" in line
    assert json.loads(record.read_text())["mlflow_run_id"] is None


def test_track_sync_ignores_the_marker_and_clears_it(tmp_path, monkeypatch):
    from workflow.core.tracking import console_line

    record, results, store = two_metric_record(tmp_path)
    uri, marker = store["MLFLOW_TRACKING_URI"], tmp_path / ".cache" / "tracking-unreachable"
    marker.parent.mkdir()
    marker.write_text(f"{uri} unreachable since 2000-01-01 00:00:00: test\n")
    out = results / "data" / "tracking.json"
    skipped = run([*SYNC_CLI, "--results", str(results), "--out", str(out)], ROOT, env=store)
    assert "Unreachable" in skipped.stderr and json.loads(out.read_text())["untracked"] == 1 and marker.exists()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    assert "1 run record(s) not tracked" in console_line(results)
    assert "1 newly logged" in run(["python", "-m", "workflow.tools.track", "sync", "--results",
                                    str(results)], ROOT, env=store).stdout  # what `make track-sync` runs
    assert not marker.exists() and console_line(results) == ""


# ---- a failed job's record: Snakemake leaves an empty file in its place ------------------------------------

def failed_job_beside(record):
    """What a failed job leaves beside a good record: Snakemake creates the declared log it did not write, empty;
    and one cut short (a full disk)."""
    empty, cut = record.parent / "failed.run.json", record.parent / "cut.run.json"
    empty.write_text("")
    cut.write_text(record.read_text()[:40])
    return empty, cut


def test_sync_skips_and_names_a_failed_jobs_empty_record(tmp_path):
    record, results, store = two_metric_record(tmp_path)
    empty, cut = failed_job_beside(record)
    out = results / "data" / "tracking.json"
    done = run([*SYNC_CLI, "--retry", "--results", str(results), "--out", str(out)], ROOT, env=store, check=False)
    assert done.returncode == 0, done.stderr  # make track-sync: the good record is logged, the rest named
    assert "1 newly logged" in done.stdout and "Traceback" not in done.stderr
    assert f"skipped {empty}: empty (the job failed" in done.stdout and f"skipped {cut}: not a complete" in done.stdout
    summary = json.loads(out.read_text())
    assert summary["unreadable_records"] == ["results/data/logs/fetch/cut.run.json",
                                             "results/data/logs/fetch/failed.run.json"] and summary["untracked"] == 0
    assert json.loads(record.read_text())["mlflow_run_id"]


def test_an_outage_with_a_failed_jobs_record_still_lists_the_good_one(tmp_path, monkeypatch):
    from workflow.core.tracking import console_line

    record, _ = fetch_co2(tmp_path)
    failed_job_beside(record)
    results = tmp_path / "results"
    outage = env() | {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}
    out = results / "data" / "tracking.json"
    done = run([*SYNC_CLI, "--results", str(results), "--out", str(out)], ROOT, env=outage)
    assert "Traceback" not in done.stderr and json.loads(out.read_text())["untracked_records"] == [
        "results/data/logs/fetch/co2.run.json"]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    assert console_line(results).startswith("MLflow: 1 run record(s) not tracked")


def test_the_end_of_run_line_names_no_error_of_a_store_no_longer_in_use(tmp_path, monkeypatch):
    from workflow.core.tracking import console_line

    record, _ = fetch_co2(tmp_path)
    results = tmp_path / "results"
    old = env() | {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}
    run([*SYNC_CLI, "--results", str(results), "--out", str(results / "data" / "tracking.json")], ROOT, env=old)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:19")  # the user points runs at another server
    line = console_line(results)
    assert line.startswith("MLflow: 1 run record(s) not tracked (not yet logged to http://127.0.0.1:19)")
    assert "127.0.0.1:9)" not in line and ":9/" not in line
