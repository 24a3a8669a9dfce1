"""The params a step declares (workflow/core/declared.py): the READS declaration read from the source, the check that a
job was given exactly its READS, and the typed, read-only view a step gets (undeclared key or wrong type: an error)."""
from __future__ import annotations

import copy
import json
import pickle

import pytest

from conftest import ROOT
from workflow.core import declared
from workflow.core import params as params_mod
from workflow.core.params import ParamsError


def started(reads, params, plan_reads=(), profile="smoke"):
    """A Step started as if from a step module that declares `reads` (Step takes READS from its caller's module)."""
    module = {"READS": reads, "PLAN_READS": plan_reads, "__spec__": None, "__name__": "fake_step"}
    exec("from workflow.core.step import Step\nstep = Step('cosa', 'tta')", module)
    step = module["step"]
    args, p = step.start(["--profile", profile, "--params", *params])
    return step, p


def test_the_view_holds_the_values_of_params_yaml_as_they_are():
    tree = params_mod.load("smoke")
    step, p = started(("cosa.datasets.{dataset}.lookback", "cosa.tta"), ["cosa.datasets.co2.lookback", "cosa.tta"])
    assert p == {"lookback": tree["cosa"]["datasets"]["co2"]["lookback"], **tree["cosa"]["tta"]}
    assert all(type(p[k]) is type(v) and p[k] == v for k, v in tree["cosa"]["tta"].items())  # ints stay ints, lists lists
    assert type(p["lookback"]) is int and p.lookback == p["lookback"] and p.get("lookback") == p["lookback"]
    assert "lookback" in p and "lr" not in p
    assert json.loads(json.dumps(p)) == dict(p) and {**p} == dict(p)
    assert step.values == {"cosa.datasets.co2.lookback": p["lookback"], "cosa.tta": tree["cosa"]["tta"]}
    assert set(p.fields) >= set(tree["cosa"]["tta"]) and p.fields["lookback"] == ("integer",)


def test_reading_an_undeclared_key_names_the_step_the_key_and_the_fix():
    _, p = started(("cosa.tta",), ["cosa.tta"])
    for read in (lambda: p["lookback"], lambda: p.lookback, lambda: p.get("lookback", 96)):
        with pytest.raises(ParamsError, match=r"reads params key 'lookback'.*add its section to READS"):
            read()
    with pytest.raises(KeyError):  # code that catches a missing key keeps working
        p["lookback"]
    with pytest.raises(AttributeError):
        p.__deepcopy_hook__


def test_an_optional_key_of_the_schema_is_declared():
    p = declared.Params({"a": 1}, "papers.x.y", {"a": ("integer",), "b": ("integer",)})
    assert p.get("b", 7) == 7 and "b" not in p


def test_the_view_is_read_only_and_survives_copies():
    _, p = started(("cosa.tta",), ["cosa.tta"])
    for write in (lambda: p.__setitem__("l2_reg", 0), lambda: p.update(l2_reg=0), lambda: setattr(p, "l2_reg", 0),
                  lambda: p.pop("l2_reg")):
        with pytest.raises(TypeError, match="read-only"):
            write()
    for twin in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert twin == p and isinstance(twin, declared.Params) and twin.fields == p.fields


def test_a_value_of_the_wrong_type_stops_the_step():
    with pytest.raises(ParamsError, match=r"'cosa.tta': 'context_size' is 2.0 \(float\), its schema wants integer"):
        declared.view({"cosa.tta": {"context_size": 2.0}}, "papers.cosa.tta")
    with pytest.raises(ParamsError, match=r"'lookback' is '96'.*integer"):
        declared.view({"cosa.datasets.co2.lookback": "96"}, "papers.cosa.tta")
    declared.view({"cosa.base": {"lr": 1, "epochs": 2}}, "papers.cosa.train_base")  # an int is a number


def test_a_job_given_other_sections_than_its_reads_stops():
    with pytest.raises(ParamsError, match=r"declares READS.*stamp=stamp\(\"papers.cosa.tta\"\)"):
        declared.check_given("workflow.papers.cosa.tta", ("cosa.datasets.{dataset}.lookback", "cosa.tta"), ["cosa.tta"])
    with pytest.raises(ParamsError, match="declares READS"):
        started(("cosa.tta",), ["cosa.base"])
    declared.check_given("workflow.papers.cosa.tta", ("cosa.datasets.{dataset}.lookback",), ["cosa.datasets.co2.lookback"])
    assert not declared.matches("cosa.datasets.{dataset}.lookback", "cosa.datasets.a.b.lookback")


def test_the_declaration_is_read_from_the_source():
    assert declared.declaration("papers.cosa.tta")["READS"] == ("cosa.datasets.{dataset}.lookback", "cosa.tta")
    assert declared.declaration("papers.scsd.train")["PLAN_READS"] == ("scsd.plan", "scsd.datasets")
    assert declared.declaration("core.fetch") == {"READS": (), "PLAN_READS": ()}


def test_a_missing_or_computed_declaration_is_an_error(tmp_path):
    (tmp_path / "workflow" / "papers").mkdir(parents=True)
    (tmp_path / "workflow" / "papers" / "none.py").write_text("import os\n\n\ndef main():\n    pass\n")
    (tmp_path / "workflow" / "papers" / "computed.py").write_text("READS = tuple(['a'])\n")
    with pytest.raises(ParamsError, match="declares no READS"):
        declared.declaration("papers.none", tmp_path)
    with pytest.raises(ParamsError, match="tuple of string literals"):
        declared.declaration("papers.computed", tmp_path)


def test_a_plan_sees_its_declared_sub_tree_and_nothing_else():
    tree = params_mod.load("smoke")
    step, p = started(("scsd.datasets.{dataset}", "scsd.run"), ["scsd.datasets.synth", "scsd.run"],
                      plan_reads=("scsd.plan", "scsd.datasets"))
    scsd = step.subtree("scsd")
    assert set(scsd) == {"datasets", "run", "plan"} and scsd["plan"] == tree["scsd"]["plan"]
    assert "plan" not in p  # the plan's sections are not part of the step's own knobs
    with pytest.raises(ParamsError, match="add its section to READS"):
        scsd["model"]
    assert declared.subtree({"soft_qd.seeds": [0], "soft_qd.evaluation.vendi_max_n": 5}, "soft_qd", "x") == {
        "seeds": [0], "evaluation": {"vendi_max_n": 5}}


def test_no_step_module_lacks_its_declaration():
    steps = [p for p in (ROOT / "workflow").rglob("*.py") if "Step(" in p.read_text() and p.name != "step.py"]
    assert len(steps) > 80
    for path in steps:
        declared.declaration(".".join(path.relative_to(ROOT / "workflow").with_suffix("").parts))
