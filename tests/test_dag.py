"""The DAG's shape rules: the paper list written once, code dependencies derived from imports, heavy imports only
where used, wildcard constraints scoped to their rules (that no module imports a step: tests/test_layout.py)."""
import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from workflow.core.imports import code_files
from workflow.papers import PAPERS

RULE_FILES = sorted((ROOT / "rules").glob("*.smk"))
STEPS = sorted({f"workflow.{m}" for path in RULE_FILES for m in re.findall(r'step\("([\w.]+)"', path.read_text())})
# Steps that train a torch model or load torch tensors; every other step must not pay torch's ~2 s import.
TORCH_STEPS = {
    "workflow.papers.cosa.train_base", "workflow.papers.cosa.tta", "workflow.papers.fairness_pareto.train_base",
    "workflow.papers.lnsp.train_teacher", "workflow.papers.lnsp.extract", "workflow.papers.scsd.train",
    "workflow.papers.soft_qd.run", "workflow.papers.soft_qd.sweep", "workflow.papers.soft_qd.tune",
    "workflow.papers.stbp.train", "workflow.papers.mppd_tv.train", "workflow.papers.tp_spikformer.train_base",
    "workflow.papers.tp_spikformer.prune", "workflow.papers.hex.train", "workflow.papers.hex.decode",
    "workflow.papers.refusion.train", "workflow.papers.refusion.decode", "workflow.papers.code_reasoning.base",
    "workflow.papers.code_reasoning.sft", "workflow.papers.semhitok.train_nets", "workflow.papers.semhitok.tokenizer",
    "workflow.papers.internspatial.encoder", "workflow.papers.internspatial.train",
    "workflow.papers.aurelius.train_evaluator", "workflow.papers.aurelius.train", "workflow.papers.aurelius.evaluate",
}


def test_the_paper_list_is_written_once():
    papers_with_rules = {p.stem for p in RULE_FILES} - {"common", "data", "report", "track"}
    papers_with_claims = {p.parent.name for p in (ROOT / "workflow/papers").glob("*/claims.yaml")}
    assert set(PAPERS) == papers_with_rules == papers_with_claims
    assert not re.search(r'include: "rules/(?!common|data|report|track)', (ROOT / "Snakefile").read_text())


def test_code_dependencies_are_the_import_closure():
    files = code_files("workflow.papers.cosa.tta")
    assert "workflow/papers/cosa/tta.py" in files and "workflow/lib/training.py" in files
    assert "workflow/core/tracking.py" not in files  # syncing MLflow is not part of any step


@pytest.mark.parametrize("step", STEPS)
def test_heavy_imports_only_where_used(step):
    probe = f"import sys, {step}; print('torch' in sys.modules, 'mlflow' in sys.modules)"
    torch, mlflow = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                                   check=True).stdout.split()
    assert mlflow == "False", f"{step} imports MLflow: tracking belongs to the track jobs"
    assert (torch == "True") == (step in TORCH_STEPS), f"{step}: torch imported={torch}"


def test_rules_track_code_and_values_through_one_stamp_per_job(tmp_path):
    """No rule has `params:` (Snakemake would import pandas to serialise them, a third of a no-op run): a job's code
    and values reach it as one stamp, rewritten only when its content changes (so a re-parse re-runs nothing)."""
    from workflow.core import stamps

    for path in RULE_FILES:
        assert not re.search(r"^    params:", path.read_text(), re.M), path.name
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow/__init__.py").write_text("")
    (tmp_path / "workflow/step.py").write_text("from workflow import lib\n")
    (tmp_path / "workflow/lib.py").write_text("X = 1\n")
    tree = {"a": {"b": 1, "c": [1, 2]}, "d": {"e": 3}}

    def stamp(**kw):
        stamps.code.cache_clear()
        return tmp_path / stamps.job(tree, "workflow.step", ["d", "a.c"], root=tmp_path, **kw)

    first = stamp()
    content = json.loads(first.read_text())
    assert sorted(content["code"]) == ["workflow/__init__.py", "workflow/lib.py", "workflow/step.py"]
    assert content["sections"] == ["d", "a.c"] and content["values"] == {"d": {"e": 3}, "a.c": [1, 2]}
    assert stamps.section_names(str(first.relative_to(tmp_path)), tmp_path) == ["d", "a.c"]  # what the step is given
    mtime = first.stat().st_mtime_ns
    assert stamp() == first and first.stat().st_mtime_ns == mtime  # same content: not rewritten
    (tmp_path / "workflow/lib.py").write_text("X = 2\n")
    assert stamp() == first and first.stat().st_mtime_ns != mtime  # an imported module changed: the stamp changed
    mtime = first.stat().st_mtime_ns
    tree["a"]["b"] = 2
    assert stamp() == first and first.stat().st_mtime_ns == mtime  # a value it does not read: not rewritten
    tree["a"]["c"] = [3]
    assert stamp() == first and first.stat().st_mtime_ns != mtime  # a value it reads: rewritten
    keyed = stamp(key="co2", derived=["m1", "m2"])
    assert keyed.name == "workflow.step@co2" and json.loads(keyed.read_text())["derived"] == ["m1", "m2"]


def test_wildcard_constraints_are_scoped_to_rules():
    """Only common.smk constrains wildcards globally (one path segment, no shell characters)."""
    for path in RULE_FILES:
        if path.name != "common.smk":
            assert not re.search(r"^wildcard_constraints:", path.read_text(), re.M), path.name
