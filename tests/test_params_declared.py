"""A step reads only the params it declared: each step module names the sections it reads in READS (and PLAN_READS, the
sections it reads only to find its share of the plan, workflow/core/declared.py); its rule stamps their values from
there (`stamp=stamp("<its step module>")`, rules/common.smk), and every key the step reads from its `p` (and every
function it hands `p` to) is a key of those sections, for every job of the DAG.

A step gets its READS sections as one flat, read-only view `p` (workflow/core/step.py); reading a key outside them
raises at run time, and this test finds such a read before anything runs. A read of a section the step did not
declare would go unseen by Snakemake (a change of that knob re-runs nothing). The jobs come from the committed dvc.yaml
(generated from the Snakemake DAG, default profile; tests/test_dvc.py keeps it fresh); the reads are found in the
source (`ast`): `p["key"]`, `p.get("key")`, `"key" in p` (and `step.values["section"]`, `step.subtree("prefix")`),
followed through the calls that pass `p` on to the paper's own modules and workflow/lib. A key read through a
variable cannot be checked here and is left out (the view catches it at run time). No step reads the whole tree."""
from __future__ import annotations

import ast
import re
from functools import lru_cache

import pytest
import yaml

from conftest import ROOT
from workflow.core import declared
from workflow.core import params as params_mod


def dvc_jobs() -> list[tuple[str, tuple[str, ...]]]:
    """(step module, the params sections its job reads) for every job of dvc.yaml, without repeats: the READS of
    the module its command runs, with the job's wildcards (what its stamp holds, rules/common.smk `stamp`)."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    out = set()
    for stage in stages.values():
        cmd = stage["do"]["cmd"] if "foreach" in stage else stage["cmd"]
        step, stamp = re.search(r"-m workflow\.run (\S+) ", cmd), re.search(r"--params \.cache/stamps/workflow\.(\S+?)[@ ]", cmd)
        if not step or not stamp:  # not a step (the track jobs run the MLflow sync, which reads no params)
            continue
        assert stamp[1] == step[1], f"{step[1]}'s command passes the stamp of {stamp[1]}"
        for item in (stage["foreach"].values() if "foreach" in stage else [{}]):
            out.add((step[1], tuple(s.format(**item) for s in declared.declaration(step[1])["READS"])))
    return sorted(out)


def declared_keys(tree: dict, names) -> set[str]:
    """The keys of `p` as Step.start merges it from these sections."""
    keys = set()
    for name, value in params_mod.sections(tree, list(names)).items():
        keys |= set(value) if isinstance(value, dict) else {name.rsplit(".", 1)[-1]}
    return keys


# ---- where a step reads `p`: its main, then every function of the project it hands `p` to ------------------------

@lru_cache(maxsize=None)
def parsed(module: str) -> ast.Module | None:
    base = ROOT / module.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return ast.parse(path.read_text())
    return None


@lru_cache(maxsize=None)
def namespace(module: str) -> dict[str, tuple[str, str | None]]:
    """name -> (module, function or None) for the module's own functions and what it imports from the project."""
    tree, names = parsed(module), {}
    package = module if (ROOT / module.replace(".", "/") / "__init__.py").is_file() else module.rsplit(".", 1)[0]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = (module, node.name)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                source = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([source] if source else []))
            for alias in node.names:
                as_module = f"{source}.{alias.name}"
                if parsed(as_module) is not None:
                    names[alias.asname or alias.name] = (as_module, None)
                else:
                    names[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = (alias.name, None)
    return {k: v for k, v in names.items() if v[0].startswith("workflow.")}


def function(module: str, name: str) -> ast.FunctionDef | None:
    tree = parsed(module)
    return next((n for n in (tree.body if tree else []) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def callee(module: str, call: ast.Call) -> tuple[str, str] | None:
    f, ns = call.func, namespace(module)
    if isinstance(f, ast.Name) and f.id in ns and ns[f.id][1]:
        return ns[f.id]
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ns and ns[f.value.id][1] is None:
        return ns[f.value.id][0], f.attr
    return None


def receiving_parameter(fn: ast.FunctionDef, call: ast.Call, name: str) -> str | None:
    """The parameter of `fn` that gets the variable `name` in this call."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Name) and arg.id == name and i < len(params):
            return params[i]
    for kw in call.keywords:
        if isinstance(kw.value, ast.Name) and kw.value.id == name and kw.arg:
            return kw.arg
    return None


def reads(module: str, fn: ast.AST, name: str, seen: set | None = None) -> set[str]:
    """The literal keys read from the dict bound to `name` in `fn` and in the project functions it passes it to."""
    seen = set() if seen is None else seen
    if (module, getattr(fn, "name", ""), name) in seen:
        return set()
    seen.add((module, getattr(fn, "name", ""), name))
    keys, aliases = set(), {name}
    for node in ast.walk(fn):  # `q = p`: q is p
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name:
            aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                keys.add(node.slice.value)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            right = node.comparators[0]
            if isinstance(right, ast.Name) and right.id in aliases and isinstance(node.left, ast.Constant):
                keys.add(node.left.value)
        elif isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "get" and isinstance(f.value, ast.Name)
                    and f.value.id in aliases and node.args and isinstance(node.args[0], ast.Constant)):
                keys.add(node.args[0].value)
            target = callee(module, node)
            if target and (callee_fn := function(*target)) is not None:
                for alias in aliases:
                    param = receiving_parameter(callee_fn, node, alias)
                    if param:
                        keys |= reads(target[0], callee_fn, param, seen)
    return keys


def step_reads(step: str) -> set[str]:
    module = f"workflow.{step}"
    main = function(module, "main")
    for node in ast.walk(main):  # args, p = step.start(argv)
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "start"
                and isinstance(node.targets[0], ast.Tuple) and isinstance(node.targets[0].elts[1], ast.Name)):
            return reads(module, main, node.targets[0].elts[1].id)
    return set()


def sections_read(step: str) -> set[str]:
    """The sections a step reads by name from `step.values` (the declared sections, one dict each)."""
    main = function(f"workflow.{step}", "main")
    return {n.slice.value for n in ast.walk(main) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
            and n.value.attr == "values" and isinstance(n.slice, ast.Constant)}


def subtrees_read(step: str) -> set[str]:
    """The prefixes a step asks `step.subtree(...)` for."""
    main = function(f"workflow.{step}", "main")
    return {n.args[0].value for n in ast.walk(main) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "subtree" and n.args and isinstance(n.args[0], ast.Constant)}


def reads_whole_tree(step: str) -> bool:
    """`.tree` anywhere in the step module, or a params.load of its own."""
    tree = parsed(f"workflow.{step}")
    return any((isinstance(n, ast.Attribute) and n.attr == "tree") or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "load" and getattr(n.func.value, "id", "") in ("params", "params_mod")) for n in ast.walk(tree))


JOBS = dvc_jobs()


def test_the_jobs_are_found():
    steps = {step for step, _ in JOBS}
    assert len(steps) > 80 and "papers.cosa.tta" in steps and "core.fetch" in steps


@pytest.mark.parametrize("step", sorted({step for step, _ in JOBS}))
def test_a_step_reads_only_the_params_it_declares(step):
    tree = params_mod.load("default")
    read, by_name, prefixes = step_reads(step), sections_read(step), subtrees_read(step)
    where = declared.source_file(step).relative_to(ROOT)
    for _, names in (job for job in JOBS if job[0] == step):
        undeclared = read - declared_keys(tree, names)
        assert not undeclared, (f"{step} reads {sorted(undeclared)}, which no section of its READS ({list(names)}) "
                                f"holds: add the section to READS in {where}")
        every = set(names) | set(declared.declaration(step)["PLAN_READS"])
        assert by_name <= every, f"{step} reads sections {sorted(by_name - every)} it does not declare ({where})"
        assert all(any(n.startswith(prefix + ".") for n in every) for prefix in prefixes), (step, prefixes, every)


@pytest.mark.parametrize("step", sorted({step for step, _ in JOBS}))
def test_every_job_is_given_the_reads_its_step_declares(step):
    reads = declared.declaration(step)["READS"]
    for _, names in (job for job in JOBS if job[0] == step):
        declared.check_given(f"workflow.{step}", reads, list(names))  # what Step.start checks, for every job


@pytest.mark.parametrize("step", sorted({step for step, _ in JOBS}))
def test_no_step_reads_the_whole_tree(step):
    assert not reads_whole_tree(step), f"{step} reads the whole params tree: declare the sections it reads instead"


def test_every_rule_takes_its_params_from_its_step():
    """The step module is the one place that says what a job reads: no rule lists sections of its own, and every rule
    that runs a step stamps that step (its code and its READS)."""
    for path in sorted((ROOT / "rules").glob("*.smk")):
        text = path.read_text()
        if path.name != "common.smk":
            assert "reads(" not in text, f"{path.name}: a rule lists params sections itself; use stamp(<step module>)"
        for rule in re.split(r"\n(?=rule \w+:)", text)[1:]:
            step = re.search(r'step\(\s*"([\w.]+)"', rule)
            params = re.search(r'stamp=stamp\("([\w.]+)"', rule)
            if step:  # a rule that runs a step reads the params its step declares
                assert params and params[1] == step[1], (path.name, rule.split(":")[0], params and params[1], step[1])


def test_the_check_sees_a_key_of_a_section_the_rule_did_not_declare():
    tree = params_mod.load("default")
    # cosa_tta without its data set's lookback section: the step's read of p["lookback"] is caught
    assert step_reads("papers.cosa.tta") - declared_keys(tree, ["cosa.tta"]) == {"lookback"}
    assert {"lr", "warmup"} <= step_reads("papers.hex.train")  # read in hex.methods.schedule, from the `p` train hands it


def test_the_check_sees_an_undeclared_key(monkeypatch):
    """The check itself: a step that hands `p` to a helper reading a key outside its sections is caught."""
    src = ("from workflow.core.step import Step\n"
           "def helper(q):\n    return q['lr'] + q.get('warmup', 0)\n"
           "def main(argv=None):\n    step = Step('x', 'y')\n    args, p = step.start(argv)\n"
           "    return helper(p) if 'epochs' in p else p['steps']\n")
    tree = ast.parse(src)
    parsed.cache_clear(), namespace.cache_clear()
    monkeypatch.setitem(globals(), "parsed", lambda module: tree if module == "workflow.fake" else None)
    try:
        assert step_reads("fake") == {"lr", "warmup", "epochs", "steps"}
    finally:
        monkeypatch.undo()
        namespace.cache_clear()
    declared = {"steps", "epochs", "lr"}
    assert {"lr", "warmup", "epochs", "steps"} - declared == {"warmup"}
