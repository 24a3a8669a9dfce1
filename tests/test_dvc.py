"""dvc.yaml is generated from the Snakemake DAG, never stale; `dvc repro` gives the same claims as snakemake."""
import json
import re

import yaml

from conftest import BIN, ROOT, copy_repo, run


def test_committed_dvc_yaml_is_not_stale():
    done = run(["python", "-m", "workflow.tools.dvcgen", "--check"], ROOT, check=False)
    assert done.returncode == 0, done.stderr + "\nRun `make dvc.yaml` and commit the result."


def test_one_entry_per_rule_mirroring_its_jobs():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    blocks = [b for path in sorted((ROOT / "rules").glob("*.smk")) for b in re.split(r"^rule ", path.read_text(), flags=re.M)[1:]]
    rules_with_jobs = {b.split(":", 1)[0] for b in blocks if "\n    shell:" in b}
    # one entry per rule of the default DAG, not per job (~5 per paper; rules run on demand, e.g. tuning, have none)
    assert {"dag_shape", "cosa_tta"} <= set(stages) and set(stages) - {"dag_shape"} <= rules_with_jobs
    tta = stages["cosa_tta"]
    item = tta["foreach"]["co2-dlinear-13-0"]
    assert item["dataset"] == "co2" and item["H"] == "13"
    assert "bin/python -m workflow.run papers.cosa.tta" in tta["do"]["cmd"] and "--profile default" in tta["do"]["cmd"]
    deps = tta["do"]["deps"]
    assert "results/cosa/base/${item.dataset}/${item.base}_H${item.H}_s${item.seed}.pt" in deps
    # values and code as Snakemake sees them: one stamp per job (per data set here), which the first stage writes
    # (params.yaml is read there)
    assert ".cache/stamps/workflow.papers.cosa.tta@${item.dataset}" in deps
    assert "params" not in tta["do"] and stages["dag_shape"]["params"] == [{"params.yaml": None}]
    stamp = json.loads((ROOT / ".cache/stamps/workflow.papers.cosa.tta@co2").read_text())
    assert "workflow/lib/training.py" in stamp["code"]  # from imports
    assert stamp["sections"] == ["cosa.datasets.co2.lookback", "cosa.tta"]
    assert stages["cosa_evaluate"]["metrics"] == [{"results/cosa/claims.json": {"cache": False}}]


def deterministic_claims(path):
    """Claim values and verdicts, leaving out wall-clock claims (marked timing: true in claims.yaml)."""
    paper = path.parent.name
    timing = {c["id"] for c in yaml.safe_load((ROOT / f"workflow/papers/{paper}/claims.yaml").read_text())["claims"]
              if c.get("timing")}
    claims = json.loads(path.read_text())["claims"]
    return {c["id"]: (c["verdict"], [chk.get("value") for chk in c["checks"]]) for c in claims if c["id"] not in timing}


# dvc repro runs stages one at a time: two papers (with everything upstream of their claims) keep CI short
# and still cover real data (cosa's fetch), training, a checkpoint dependency and the claims engine.
DVC_PAPERS = ("adam_implicit_bias", "cosa")


def test_dvc_repro_on_a_fresh_clone_gives_the_same_claims(smoke_repo, tmp_path):
    repo = copy_repo(tmp_path)
    run(["python", "-m", "workflow.tools.dvcgen", "--profile", "smoke"], repo)
    stages = [f"{paper}_evaluate" for paper in DVC_PAPERS]
    run([str(BIN / "dvc"), "repro", *stages], repo)
    assert (repo / "results/cosa/tta/co2/dlinear_H13_s0.json").exists()
    for paper in DVC_PAPERS:
        assert deterministic_claims(repo / f"results/{paper}/claims.json") == \
            deterministic_claims(smoke_repo / f"results/{paper}/claims.json"), paper
    # DVC ran each step with the values Snakemake used
    for rec in ("cosa/logs/tta/co2/dlinear_H13_s0.run.json", "adam_implicit_bias/logs/train/gr0/family.run.json"):
        a, b = (json.loads((r / "results" / rec).read_text()) for r in (repo, smoke_repo))
        assert a["params"] == b["params"] and a["params_hash"] == b["params_hash"]
    # after dvc repro: snakemake --touch records the outputs as current, so nothing is left to do
    claims = [f"results/{paper}/claims.json" for paper in DVC_PAPERS]
    run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "--touch", *claims], repo)
    dry = run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "-n", *claims], repo).stdout
    assert "Nothing to be done" in dry
    assert "changed" not in run([str(BIN / "dvc"), "status", *stages], repo).stdout


def test_after_snakemake_dvc_commit_leaves_dvc_with_nothing_to_do(smoke_repo):
    run(["python", "-m", "workflow.tools.dvcgen", "--profile", "smoke"], smoke_repo)
    try:
        run([str(BIN / "dvc"), "repro", "--quiet", "dag_shape"], smoke_repo)  # as `make reproduce` does
        run([str(BIN / "dvc"), "commit", "--force", "--no-relink", "--quiet"], smoke_repo)
        status = run([str(BIN / "dvc"), "status"], smoke_repo).stdout
        assert "up to date" in status.lower(), status
        # the commit left the files Snakemake made as they were (a relink rewrites the cached ones: new mtimes)
        dry = run([str(BIN / "snakemake"), "--profile", "profiles/smoke", "-n"], smoke_repo).stdout
        assert "Nothing to be done" in dry, dry[-3000:]
    finally:
        run(["git", "checkout", "--", "dvc.yaml"], smoke_repo)


def test_dvc_reruns_what_a_value_knob_touches_and_stops_on_a_shape_knob(smoke_repo, tmp_path):
    """`dvc exp run -S` on a value re-runs only the stages that read it; a knob that adds or removes jobs (here: no Gauss runs) stops `dvc repro`
    at the first stage with the fix, instead of running a stale pipeline."""
    repo = copy_repo(tmp_path)
    run(["python", "-m", "workflow.tools.dvcgen", "--profile", "smoke"], repo)
    run(["git", "commit", "-qam", "smoke dvc.yaml"], repo)
    run([str(BIN / "dvc"), "repro", "adam_implicit_bias_evaluate"], repo)
    run(["git", "add", "dvc.lock"], repo)
    run(["git", "commit", "-qm", "lock"], repo)
    done = run([str(BIN / "dvc"), "exp", "run", "-S", "adam_implicit_bias.train.eta0=0.05", "adam_implicit_bias_evaluate"], repo)
    ran = set(re.findall(r"Running stage '([^']+)'", done.stdout + done.stderr))
    assert ran and all(s.startswith(("adam_implicit_bias_train@", "adam_implicit_bias_evaluate", "dag_shape")) for s in ran), ran
    shape = run([str(BIN / "dvc"), "exp", "run", "-S", "adam_implicit_bias.plan.gauss=[]", "adam_implicit_bias_evaluate"],
                repo, check=False)
    assert shape.returncode != 0 and "make dvc.yaml" in shape.stdout + shape.stderr


def test_dvc_never_records_another_profiles_outputs(tmp_path):
    """After a smoke run, the README's `dvc repro dag_shape && dvc commit` (dvc.yaml of the default profile) stops at
    the first stage, before the commit: DVC would record the smoke outputs as the default stages' and skip them."""
    from conftest import smoke_run

    repo = smoke_run(tmp_path, "adam_implicit_bias")
    done = run(["bash", "-c", f"{BIN / 'dvc'} repro --quiet dag_shape && {BIN / 'dvc'} commit --force --no-relink --quiet"],
               repo, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "outputs of another profile than this dvc.yaml's (default)" in out
    assert "under the smoke profile (e.g. results/adam_implicit_bias/logs/" in out
    assert not (repo / "dvc.lock").exists()  # nothing was recorded
