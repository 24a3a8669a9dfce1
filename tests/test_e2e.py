"""End to end, as a user would: the smoke profile through snakemake, the report, MLflow, re-runs."""
import json
import re

from conftest import BIN, ROOT, run

from workflow.papers import PAPERS


def planned_jobs(repo) -> dict[str, int]:
    """Job counts of a dry run (empty when nothing is to be done)."""
    out = run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "-n"], repo).stdout
    stats = out.split("Job stats:")[1].split("\n\n")[0] if "Job stats:" in out else ""
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M) if m[1] != "total"}


def test_report_has_every_paper_with_verdicts(smoke_repo):
    html = (smoke_repo / "results/report/index.html").read_text()
    csv = (smoke_repo / "results/report/claims.csv").read_text()
    for paper in PAPERS:
        claims = json.loads((smoke_repo / f"results/{paper}/claims.json").read_text())
        assert claims["profile"] == "smoke" and claims["claims"]
        assert all(c["verdict"] in {"pass", "fail", "inconclusive", "info"} for c in claims["claims"])
        assert f'id="{paper}"' in html and paper in csv
    figures = [f for paper in PAPERS for f in (smoke_repo / "results" / paper / "figures").glob("*.png")]
    assert len(figures) >= 2 * len(PAPERS) and html.count("data:image/png;base64,") == len(figures)  # all embedded
    table = (smoke_repo / "results/report/verdicts.md").read_text()  # the README's table, from this run
    assert "from the smoke profile" in table and all(f"[{paper}]" in table for paper in PAPERS)


def test_every_claim_is_measured_or_declares_why_not(smoke_repo):
    """No silent misses: each check (and each control's check) has values, or claims.yaml says why the smoke
    profile skips it; every reproduction claim carries its control's verdict or the reason it has none."""
    for paper in PAPERS:
        claims = json.loads((smoke_repo / f"results/{paper}/claims.json").read_text())["claims"]
        for c in claims:
            assert c["kind"] in {"reproduction", "sanity", "info"}, (paper, c["id"])
            for chk in c["checks"] + c.get("control", {}).get("checks", []):
                assert chk["n"] > 0 or "not measured in the smoke profile" in chk.get("why", ""), (paper, c["id"], chk)
            if c["kind"] == "reproduction":
                assert "none" in c["control"] or c["control"]["verdict"] in {"pass", "fail", "inconclusive"}, (paper, c["id"])
                assert isinstance(c["uncontrolled"], bool)


def test_mlflow_has_a_finished_run_per_job_with_tags(smoke_repo):
    code = """
import json, sys
from mlflow.tracking import MlflowClient
c = MlflowClient(sys.argv[1])
out = {}
for paper in ("adam_implicit_bias", "cosa", "data", "report"):
    e = c.get_experiment_by_name(paper)
    runs = c.search_runs([e.experiment_id], max_results=1000)
    out[paper] = [dict(status=r.info.status, **{k: r.data.tags.get(k) for k in
                  ("paper", "step", "rule", "wildcards", "git_commit", "params_hash", "profile", "host")}) for r in runs]
print(json.dumps(out))
"""
    uri = f"sqlite:///{smoke_repo / 'mlflow.db'}"
    runs = json.loads(run(["python", "-c", code, uri, *PAPERS, "data", "report"], smoke_repo).stdout)
    records = {p: len(list((smoke_repo / "results" / p / "logs").glob("**/*.run.json"))) for p in runs}
    for paper, paper_runs in runs.items():
        assert len(paper_runs) == records[paper] > 0, paper  # one run per job, no duplicates
        assert all(r["status"] == "FINISHED" and r["profile"] == "smoke" and r["git_commit"] and r["params_hash"]
                   for r in paper_runs)
    assert {r["step"] for r in runs["cosa"]} == {"prepare", "train_base", "tta", "evaluate", "plot"}


def test_second_run_has_nothing_to_do(smoke_repo):
    assert planned_jobs(smoke_repo) == {}


def test_changing_one_cosa_parameter_reruns_only_its_jobs(smoke_repo):
    overlay = smoke_repo / "profiles/smoke/params.yaml"
    original = overlay.read_text()
    try:
        overlay.write_text(original.replace("co2:             {source: co2, lookback: 52,",
                                            "co2:             {source: co2, lookback: 40,"))
        assert overlay.read_text() != original
        assert planned_jobs(smoke_repo) == {"cosa_train_base": 1, "cosa_tta": 1, "cosa_evaluate": 1, "cosa_plot": 1,
                                            "report": 1, "track": 2, "all": 1}  # track: cosa's and the report's MLflow sync
    finally:
        overlay.write_text(original)


def dry_run_reasons(repo) -> list[tuple[str, str, str]]:
    """(rule, input line, reason line) of every job a smoke dry run plans."""
    out = run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "-n"], repo).stdout
    jobs = []
    for block in out.split("\nrule ")[1:]:
        fields = dict(re.findall(r"^    (input|reason): (.*)$", block, re.M))
        jobs.append((block.split(":", 1)[0], fields.get("input", ""), fields.get("reason", "")))
    return jobs


def stamped_files(repo, text: str) -> set[str]:
    """The source files the code stamps named in a dry run's input or reason line stand for."""
    return {f for stamp in re.findall(r"\.cache/stamps/code/[\w.]+", text)
            for f in json.loads((repo / stamp).read_text())["files"]}


def test_changing_a_module_reruns_exactly_the_jobs_that_import_it(smoke_repo):
    """Code dependencies are derived from imports: editing workflow/lib/training.py re-runs the jobs whose step
    imports it (directly or not) and what depends on their outputs, nothing else."""
    import os

    from workflow.core.imports import code_files

    module = smoke_repo / "workflow/lib/training.py"
    original, stat = module.read_text(), module.stat()
    try:
        module.write_text(original + "\n# an edit\n")
        jobs = dry_run_reasons(smoke_repo)
        # A job's code is one stamp (.cache/stamps/code/<step module>) listing its files: Snakemake names the
        # stamp of the edited code as the reason only when no upstream job re-runs too (cosa_tta's reason is its
        # re-trained base model), so: every job that imports it runs, and every other job runs only downstream
        importers = {rule for rule, inputs, _ in jobs if "workflow/lib/training.py" in stamped_files(smoke_repo, inputs)}
        edited = {rule for rule, _, reason in jobs if "workflow/lib/training.py" in stamped_files(smoke_repo, reason)}
        assert edited and edited <= importers == {"cosa_train_base", "cosa_tta", "stbp_train", "scsd_train"}
        assert all(rule in importers or reason.startswith("Input files updated by another job")
                   for rule, _, reason in jobs), jobs
        step_of = {"cosa_train_base": "workflow.papers.cosa.train_base", "stbp_train": "workflow.papers.stbp.train"}
        assert all("workflow/lib/training.py" in code_files(m, smoke_repo) for m in step_of.values())
    finally:
        module.write_text(original)
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert planned_jobs(smoke_repo) == {}


def test_steps_record_the_values_they_used(smoke_repo):
    rec = json.loads((smoke_repo / "results/cosa/logs/tta/co2/dlinear_H13_s0.run.json").read_text())
    assert rec["params"]["cosa.datasets.co2.lookback"] == 52
    assert rec["params"]["cosa.tta"]["methods"] == ["no_tta", "last_error", "cosa", "tafas_lite", "cosa_stale_gt",
                                                    "cosa_leak_one_step"]
    assert rec["rule"] == "cosa_tta" and rec["wildcards"] == "H=13,base=dlinear,dataset=co2,seed=0"


def test_dashboard_serves_both_papers_on_loopback(smoke_repo):
    """The command `make mlflow-ui` runs, on a free loopback port; queried through MLflow's REST API."""
    import json as _json
    import socket
    import subprocess
    import time
    import urllib.request

    from conftest import env

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = run(["python", "-m", "workflow.core.tracking", "uri"], smoke_repo).stdout.strip()
    assert uri == f"sqlite:///{smoke_repo / 'mlflow.db'}"
    server = subprocess.Popen([str(BIN / "mlflow"), "ui", "--backend-store-uri", uri, "--host", "127.0.0.1",
                               "--port", str(port), "--workers", "1"], cwd=smoke_repo, env=env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body = None
        for _ in range(120):  # the UI needs 20-35 s to start on a busy 2-core machine
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/api/2.0/mlflow/experiments/search",
                                             data=b'{"max_results": 100}', headers={"Content-Type": "application/json"})
                body = _json.loads(urllib.request.urlopen(req, timeout=5).read())
                break
            except OSError:
                time.sleep(1)
        assert body is not None, "the MLflow UI did not answer within 120 s"
        names = {e["name"] for e in body["experiments"]}
        assert {"adam_implicit_bias", "cosa"} <= names
    finally:
        server.terminate()
        server.wait(timeout=30)
