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
    """The source files the job stamps named in a dry run's input or reason line stand for."""
    return {f for stamp in re.findall(r"\.cache/stamps/[\w.@]+", text)
            for f in json.loads((repo / stamp).read_text())["code"]}


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
        # A job's code is in its stamp (.cache/stamps/<step module>[@key]), listing its files: Snakemake names the
        # stamp of the edited code as the reason only when no upstream job re-runs too (cosa_tta's reason is its
        # re-trained base model), so: every job that imports it runs, and every other job runs only downstream
        importers = {rule for rule, inputs, _ in jobs if "workflow/lib/training.py" in stamped_files(smoke_repo, inputs)}
        edited = {rule for rule, _, reason in jobs if "workflow/lib/training.py" in stamped_files(smoke_repo, reason)}
        assert edited and edited <= importers == {"cosa_train_base", "cosa_tta", "stbp_train", "scsd_train",
                                                   "tp_spikformer_prune"}  # state_hash lives in lib/training
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
                                                    "cosa_leak_one_step", "cosa_flip_resid", "cosa_shuffled_ctx",
                                                    "cosa_input_gcm"]
    assert rec["rule"] == "cosa_tta" and rec["wildcards"] == "H=13,base=dlinear,dataset=co2,seed=0"


def test_dashboard_serves_both_papers_on_loopback(smoke_repo, dashboard):
    """The command `make mlflow-ui` runs, on a free loopback port; queried through MLflow's REST API."""
    import urllib.request

    uri = run(["python", "-m", "workflow.tools.track", "uri"], smoke_repo).stdout.strip()
    assert uri == f"sqlite:///{smoke_repo / 'mlflow.db'}"
    req = urllib.request.Request(f"http://127.0.0.1:{dashboard}/api/2.0/mlflow/experiments/search",
                                 data=b'{"max_results": 100}', headers={"Content-Type": "application/json"})
    names = {e["name"] for e in json.loads(urllib.request.urlopen(req, timeout=30).read())["experiments"]}
    assert {"adam_implicit_bias", "cosa"} <= names


def test_runs_can_be_told_apart_and_grouped_and_the_evaluate_run_carries_the_verdicts(smoke_repo):
    code = """
import json, sys
from mlflow.tracking import MlflowClient
c = MlflowClient(sys.argv[1])
e = c.get_experiment_by_name("cosa")
runs = c.search_runs([e.experiment_id], max_results=1000)
print(json.dumps(dict(kind=e.tags.get("mlflow.experimentKind"), note=e.tags.get("mlflow.note.content"),
                      default=c.get_experiment_by_name("Default").tags.get("mlflow.note.content"),
                      runs=[dict(name=r.info.run_name, params=r.data.params, tags=r.data.tags,
                                 inputs=[d.dataset.name for d in r.inputs.dataset_inputs]) for r in runs])))
"""
    got = json.loads(run(["python", "-c", code, f"sqlite:///{smoke_repo / 'mlflow.db'}"], smoke_repo).stdout)
    assert got["kind"] == "custom_model_development" and got["default"]  # opens on its runs; every experiment described
    assert "**" not in got["note"] and "Latest verdicts (smoke profile)" in got["note"]  # plain text in the list
    tta = [r for r in got["runs"] if r["tags"]["step"] == "tta"]
    assert "tta dlinear co2 H13 s0" in {r["name"] for r in tta}
    assert all(r["params"]["seed"] == r["tags"]["wildcards"].rsplit("seed=", 1)[1] and "dataset" in r["params"] for r in tta)
    assert all(r["inputs"] for r in tta)  # the prepared data set and the base model it adapted
    evaluate = next(r for r in got["runs"] if r["tags"]["step"] == "evaluate")
    claims = json.loads((smoke_repo / "results/cosa/claims.json").read_text())["claims"]
    assert {evaluate["tags"][f"claim.{c['id']}"] for c in claims} <= {"pass", "fail", "inconclusive", "info"}
    assert all(evaluate["tags"][f"claim.{c['id']}"] == c["verdict"] for c in claims)
    assert "| claim | kind | verdict |" in evaluate["tags"]["mlflow.note.content"]


def test_the_reports_headline_matches_claims_json_and_shows_nothing_of_the_machine(smoke_repo):
    from workflow.core.claims import summarise

    page = (smoke_repo / "results/report/index.html").read_text()
    claims = [c for paper in PAPERS for c in json.loads((smoke_repo / f"results/{paper}/claims.json").read_text())["claims"]]
    totals = summarise(claims)["headline"]
    block = page.split('<div class="headline">', 1)[1].split("</div>\n</div>", 1)[0]
    shown = [int(n) for n in re.findall(r"<b>(\d+)</b>", block)]
    assert shown[:5] == [totals[c] for c in ("pass_controlled", "pass_uncontrolled", "fail", "inconclusive", "gated")]
    assert "Its verdicts are not evidence" in page  # a smoke report says so
    assert str(smoke_repo) not in page and str(ROOT) not in page and "(issue" not in page
    assert re.search(r"<footer>Built .* from commit <code>[0-9a-f]{40}", page)
    rows = __import__("csv").DictReader(open(smoke_repo / "results/report/claims.csv"))
    assert {"gated_by", "ungated_verdict", "control_verdict", "aa_verdict", "placebo_verdict"} <= set(rows.fieldnames)
    assert "uncontrolled_label" not in rows.fieldnames


def test_jobs_run_under_snakemakes_interpreter_without_activation(tmp_path):
    """`.venv/bin/snakemake` with the environment not activated: the jobs' `python` is the project's, not the first
    one on PATH (which lacks the project's packages); and `dvc repro` likewise."""
    import os

    from conftest import copy_repo, env

    repo = copy_repo(tmp_path)
    (repo / ".venv").symlink_to(ROOT / ".venv")  # the clone's own environment (make setup), not activated
    bare = env() | {"PATH": "/usr/bin:/bin"}  # no venv on PATH: a job running plain `python` finds none of it
    target = "results/adam_implicit_bias/data/gr0.npz"
    run([str(BIN / "snakemake"), "--cores", "1", target], repo, env=bare)  # the default profile, as dvc.yaml's
    assert (repo / target).exists()
    run([str(BIN / "dvc"), "repro", "--quiet", "adam_implicit_bias_data@gr1"], repo, env=bare)
    assert (repo / "results/adam_implicit_bias/data/gr1.npz").exists() and os.access(repo / "bin/python", os.X_OK)
