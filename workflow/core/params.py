"""params.yaml + a profile overlay -> one validated tree of parameters.

There is one way parameters reach a step, shared by every entry point:

* ``params.yaml`` holds every knob (the default profile), grouped paper -> step.
* ``profiles/<name>/params.yaml`` (optional) overrides some of them; it may only name keys that exist.
* Before any job runs, ``params.yaml`` on its own and every profile's merged tree are validated against
  ``workflow/schemas/`` (top level + one file per paper); a duplicate key, a YAML syntax error, an empty file or
  ``2.0`` where an integer is required stop the run with a one-line message naming the file (or profile).
* A step module declares the sections it reads (``READS``, workflow/core/declared.py); its rule takes them as
  input (``stamp=stamp("papers.cosa.tta")``: its job's stamp holds their values, workflow/core/stamps.py): Snakemake and
  the generated ``dvc.yaml`` both re-run exactly the jobs whose sections changed.
* The step resolves the same sections itself from ``--profile`` and ``--params``, so ``snakemake``,
  ``dvc repro`` and ``dvc exp run -S key=value`` (which edits params.yaml) all feed it identical values.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"


class ParamsError(ValueError):
    """A parameter problem, worded for the user: which key, what is wrong, how to fix it."""


# Bounds that every knob has unless its schema states its own (a 2-core machine's reach, not the papers'):
# - a count (an integer): the largest in any profile is 500,000 (lnsp's membership queries); ten million steps,
#   samples or data sets is past what 2 cores finish in a day, so it is a typo or a slip of units. 10**9 GR data
#   sets passed validation and died of a MemoryError in the job planner.
MAX_COUNT = 10_000_000
# - a list: the longest in any profile has 14 items (code_reasoning's renderings); every list is a fan-out (seeds,
#   methods, data sets, grid points), and 256 of one multiplies a paper's jobs past a day on 2 cores. A list of
#   100,000 seeds built the DAG for minutes with no message.
MAX_ITEMS = 256
# - the plan as a whole: the files the rules list before the DAG is built (each paper's evaluate rule lists its
#   runs: about 1,200 in the default and smoke profiles). Snakemake spends about 1.5 ms per job building the DAG (bench/dag_scale.py)
#   and 2 cores about a minute per job running it: past 50,000 the DAG alone takes minutes and the run weeks.
#   A cluster run that needs more says so: `snakemake --config max_planned_files=N`.
MAX_PLANNED_FILES = 50_000
DEFAULT_BOUND = "x-default-bound"  # marks a bound added here, so that its error says where it comes from


class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml parses: 10x faster, every job reads
    """The safe loader, except that a key given twice in one mapping is an error.

    Plain YAML keeps the last one silently: a knob pasted twice while editing would run with whichever comes second.
    """

    def construct_mapping(self, node, deep=False):
        first = {}
        for key_node, _ in node.value:
            # merge keys ('<<') may legitimately be overridden; non-scalar keys fail in the base class anyway
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node)
            if key in first:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key}' (first at line {first[key].line + 1}; "
                                "YAML would silently keep the last one: remove one)", key_node.start_mark)
            first[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the project when inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def read_yaml(path: Path):
    """The file's data ({} when empty); a YAML problem is one ParamsError line: file, line, column, what was expected."""
    try:
        with open(path) as fh:
            return yaml.load(fh, Loader=StrictLoader) or {}
    except yaml.MarkedYAMLError as err:  # yaml's own text is 4 lines plus a 20-frame traceback through the parser
        mark = err.problem_mark
        where = f"{shown(path)}, line {mark.line + 1}, column {mark.column + 1}" if mark else shown(path)
        what = err.problem or "invalid YAML"
        if err.context:  # e.g. 'while parsing a flow sequence' and where that sequence started
            what += f" ({err.context}" + (f" that starts at line {err.context_mark.line + 1}, column "
                                          f"{err.context_mark.column + 1}" if err.context_mark else "") + ")"
        raise ParamsError(f"{where}: {what}") from None
    except yaml.YAMLError as err:  # unmarked errors (e.g. a byte that is not UTF-8): still one line
        raise ParamsError(f"{shown(path)}: {' '.join(str(err).split())}") from None


def overlay(base: dict, over: dict, where: str = "") -> dict:
    """Deep-merge `over` into a copy of `base`; a key absent from `base` is an error (a typo, not a new knob)."""
    merged = copy.deepcopy(base)
    for key, value in over.items():
        path = f"{where}.{key}" if where else key
        if key not in base:
            raise ParamsError(f"profile overrides unknown key '{path}': it is not in params.yaml "
                              "(check the spelling, or add the knob to params.yaml and the schema first)")
        if isinstance(value, dict) and isinstance(base[key], dict):
            merged[key] = overlay(base[key], value, path)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def schema(folder: Path = SCHEMAS) -> dict:
    """The top-level schema with each paper's section schema (<slug>.schema.yaml) added as a required property,
    and the default bounds (MAX_COUNT, MAX_ITEMS) on every integer and list whose schema states none."""
    top = read_yaml(folder / "params.schema.yaml")
    for path in sorted(folder.glob("*.schema.yaml")):
        if path.name not in ("params.schema.yaml", "claims.schema.yaml"):  # the rest: one per paper
            slug = path.name.removesuffix(".schema.yaml")
            top["properties"][slug] = read_yaml(path)
            top["required"].append(slug)
    return with_default_bounds(top)


def with_default_bounds(node):
    """The schema with `maximum: MAX_COUNT` on each integer and `maxItems: MAX_ITEMS` on each array that states no
    bound of its own (in place; marked DEFAULT_BOUND, which the validator ignores and the error message reads)."""
    if isinstance(node, list):
        for item in node:
            with_default_bounds(item)
    elif isinstance(node, dict):
        kind = node.get("type")
        if kind == "integer" and "maximum" not in node and "exclusiveMaximum" not in node:
            node |= {"maximum": MAX_COUNT, DEFAULT_BOUND: True}
        if kind == "array" and "maxItems" not in node:
            node |= {"maxItems": MAX_ITEMS, DEFAULT_BOUND: True}
        for value in node.values():
            with_default_bounds(value)
    return node


def non_finite(tree, where: str = "") -> list[str]:
    """The keys whose value is NaN or an infinity (YAML's .nan, .inf). JSON Schema's `number` admits them, and a
    NaN knob runs every job before anything notices (a NaN learning rate, a NaN threshold that never passes)."""
    if isinstance(tree, dict):
        return [k for key, value in tree.items() for k in non_finite(value, f"{where}.{key}" if where else str(key))]
    if isinstance(tree, list):
        return [k for i, value in enumerate(tree) for k in non_finite(value, f"{where}.{i}")]
    return [where] if isinstance(tree, float) and not math.isfinite(tree) else []


def error_line(err) -> str:
    """One schema error as the user reads it: the key, what is wrong, and for a default bound, why it is there."""
    key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        msg = f"unknown key(s) {', '.join(repr(e) for e in extra)}; allowed: {', '.join(sorted(err.schema.get('properties', {})))}"
        key = ".".join([key] + extra[:1]) if key != "(top level)" else extra[0]
    elif err.schema.get(DEFAULT_BOUND) and err.validator in ("maximum", "maxItems"):
        what = f"{err.instance:,} is over" if err.validator == "maximum" else f"{len(err.instance):,} items are over"
        bound = MAX_COUNT if err.validator == "maximum" else MAX_ITEMS
        msg = (f"{what} the bound of {bound:,} that every {'count' if err.validator == 'maximum' else 'list'} has "
               "(more than 2 cores can run; see MAX_COUNT and MAX_ITEMS in workflow/core/params.py): a typo? If the "
               "run really needs it, state the field's own bound in its schema")
    else:
        msg = err.message
    return f"  {key}: {msg}"


def validator_class():
    """Draft 2020-12, except that 'integer' means an int: the standard accepts 2.0, which then crashes the job that
    does range(2.0) (and a bool is no integer either)."""
    import jsonschema  # imported here: a job whose params are already known valid never pays for it

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool))
    return jsonschema.validators.extend(base, type_checker=checker)


@lru_cache(maxsize=1)
def validator():
    """The validator of the full schema, with each paper's section registered under its $id: otherwise every
    '#/$defs/...' reference inside a section makes the reference registry crawl the whole schema again (0.6 s per
    validation; 20 ms with the sections registered)."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    full = schema()
    sections = [s for s in full["properties"].values() if "$id" in s]
    registry = Registry().with_resources((s["$id"], DRAFT202012.create_resource(s)) for s in sections)
    return validator_class()(full, registry=registry)


def validate(params: dict, what: str = "params.yaml + profile") -> None:
    """Raise ParamsError naming `what` (the file or profile) and the first offending keys."""
    errors = sorted(validator().iter_errors(params), key=lambda e: list(e.absolute_path))
    lines = [f"  {key}: not a finite number (.nan and .inf are refused where a number is meant)"
             for key in non_finite(params)]
    lines += [error_line(err) for err in errors]
    if lines:
        raise ParamsError(f"invalid parameters in {what}, nothing was run:\n" + "\n".join(lines[:10]))


def check_plan_size(planned: int, limit: int | None = None) -> None:
    """Stop before the DAG is built when the rules plan more files than MAX_PLANNED_FILES (or `limit`)."""
    limit = MAX_PLANNED_FILES if limit is None else int(limit)
    if planned > limit:
        raise ParamsError(f"the parameters plan {planned:,} files, over the bound of {limit:,} (MAX_PLANNED_FILES "
                          "in workflow/core/params.py: Snakemake would take minutes to build the DAG and 2 cores weeks "
                          "to run it), nothing was run: check the lists and counts of params.yaml and the profile; a "
                          "cluster run that needs more: `snakemake --config max_planned_files=N`")


def read_params(path: Path) -> dict:
    """params.yaml itself: it holds every knob, so empty (or not a mapping) is an error of its own."""
    params = read_yaml(path)
    if not params:
        raise ParamsError(f"{shown(path)} is empty: it must hold every knob, grouped paper -> step "
                          "(restore it with `git checkout params.yaml`)")
    if not isinstance(params, dict):
        raise ParamsError(f"{shown(path)} must be a mapping paper -> step -> knob, not a {type(params).__name__}")
    return params


def merged(base: dict, over_file: Path) -> dict:
    """params.yaml with one profile's overrides; an error names the profile's file."""
    over = read_yaml(over_file)
    if not isinstance(over, dict):
        raise ParamsError(f"{shown(over_file)} must be a mapping of overrides, not a {type(over).__name__}")
    if not over and over_file.parent.name != "default":  # the default profile is params.yaml itself
        raise ParamsError(f"{shown(over_file)} overrides nothing: the '{over_file.parent.name}' profile would run the "
                          "default profile's sizes under its own name (restore it with `git checkout "
                          f"{shown(over_file)}`, or remove the profile's folder)")
    try:
        return overlay(base, over)
    except ParamsError as err:
        raise ParamsError(f"{shown(over_file)}: {err}") from None


def load(profile: str = "default", root: Path = ROOT) -> dict:
    """The validated parameter tree of a profile."""
    params = read_params(root / "params.yaml")
    profile_dir = root / "profiles" / profile
    if not profile_dir.is_dir():
        known = sorted(p.name for p in (root / "profiles").iterdir() if p.is_dir())
        raise ParamsError(f"unknown profile '{profile}'; known profiles: {', '.join(known)}")
    validate_once(params, root)
    over_file = profile_dir / "params.yaml"
    return merged(params, over_file) if over_file.exists() else params


def passed_stamp(check: str, files: list[Path], root: Path = ROOT, extra: str = "") -> Path:
    """Where a check that these exact files passed leaves its stamp: named by the fingerprint of their names and
    bytes (and `extra`, what else the check reads), so that a check of unchanged files is not repeated."""
    digest = hashlib.sha256(extra.encode() + b"\0")
    for path in files:
        digest.update(str(path.relative_to(root) if path.is_relative_to(root) else path).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return root / ".cache" / check / digest.hexdigest()


def validate_once(params: dict, root: Path = ROOT) -> None:
    """Validate params.yaml alone and every profile's merged tree, skipped when these exact files already passed.

    Alone: a profile that overrides a bad value (smoke, what the tests run) would otherwise hide it until a default
    run. Every profile: a broken profile is found by whoever edits params.yaml, not later by whoever runs it.
    Validation costs about a second (jsonschema on the trees) and every job loads the params: the Snakefile
    validates once before any job runs and leaves a stamp named by the fingerprint of the parameter files, the
    schemas and this module (its rules are part of "valid"); a job started by `dvc repro` after `dvc exp run -S`
    (which edits params.yaml) finds no stamp and validates.
    """
    overlays = sorted((root / "profiles").glob("*/params.yaml"))
    stamp = passed_stamp("params-valid", [root / "params.yaml", *overlays, *sorted(SCHEMAS.glob("*.schema.yaml")),
                                          Path(__file__)], root)
    if stamp.exists():
        return
    validate(params, shown(root / "params.yaml"))
    for over_file in overlays:
        tree = merged(params, over_file)
        if tree != params:  # the default profile overrides nothing: its tree was just validated (a second each)
            validate(tree, f"profile '{over_file.parent.name}' ({shown(over_file)} over params.yaml)")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


def section(params: dict, dotted: str):
    """params['a']['b'] for 'a.b', with an error that names the missing part."""
    node = params
    for i, part in enumerate(dotted.split(".")):
        if not isinstance(node, dict) or part not in node:
            raise ParamsError(f"params has no section '{'.'.join(dotted.split('.')[:i + 1])}' (asked for '{dotted}')")
        node = node[part]
    return node


def sections(params: dict, dotted_list: list[str]) -> dict:
    """The values a step reads: {'cosa.tta': {...}, ...}."""
    return {name: section(params, name) for name in dotted_list}


def params_hash(values) -> str:
    """A short, order-independent fingerprint of the values a step used."""
    blob = json.dumps(values, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]
