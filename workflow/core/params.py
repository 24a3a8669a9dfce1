"""params.yaml + a profile overlay -> one validated tree of parameters.

There is one way parameters reach a step, shared by every entry point:

* ``params.yaml`` holds every knob (the default profile), grouped paper -> step.
* ``profiles/<name>/params.yaml`` (optional) overrides some of them; it may only name keys that exist.
* The merged tree is validated against ``workflow/schemas/`` (top level + one file per paper) before any job runs.
* A rule declares the sections it reads (input ``params=reads("cosa.tta")``, stamps of their values,
  workflow/core/stamps.py): Snakemake re-runs exactly the jobs whose sections changed; the generated
  ``dvc.yaml`` lists the same keys.
* The step resolves the same sections itself from ``--profile`` and ``--params``, so ``snakemake``,
  ``dvc repro`` and ``dvc exp run -S key=value`` (which edits params.yaml) all feed it identical values.
"""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"


class ParamsError(ValueError):
    """A parameter problem, worded for the user: which key, what is wrong, how to fix it."""


def read_yaml(path: Path):
    with open(path) as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # libyaml: 10x faster


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
    """The top-level schema with each paper's section schema (<slug>.schema.yaml) added as a required property."""
    top = read_yaml(folder / "params.schema.yaml")
    for path in sorted(folder.glob("*.schema.yaml")):
        if path.name not in ("params.schema.yaml", "claims.schema.yaml"):  # the rest: one per paper
            slug = path.name.removesuffix(".schema.yaml")
            top["properties"][slug] = read_yaml(path)
            top["required"].append(slug)
    return top


def validate(params: dict) -> None:
    """Raise ParamsError naming the first offending key (unknown key, wrong type, out of range)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    lines = []
    for err in errors[:10]:
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        if err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            msg = f"unknown key(s) {', '.join(repr(e) for e in extra)}; allowed: {', '.join(sorted(err.schema.get('properties', {})))}"
            key = ".".join([key] + extra[:1]) if key != "(top level)" else extra[0]
        else:
            msg = err.message
        lines.append(f"  {key}: {msg}")
    raise ParamsError("invalid parameters (params.yaml + profile), nothing was run:\n" + "\n".join(lines))


def load(profile: str = "default", root: Path = ROOT) -> dict:
    """The validated parameter tree of a profile."""
    params = read_yaml(root / "params.yaml")
    profile_dir = root / "profiles" / profile
    if not profile_dir.is_dir():
        known = sorted(p.name for p in (root / "profiles").iterdir() if p.is_dir())
        raise ParamsError(f"unknown profile '{profile}'; known profiles: {', '.join(known)}")
    over_file = profile_dir / "params.yaml"
    if over_file.exists():
        params = overlay(params, read_yaml(over_file))
    validate_once(params)
    return params


def validate_once(params: dict, cache: Path = ROOT / ".cache" / "params-valid") -> None:
    """validate(), skipped when these exact values already passed against these exact schemas.

    Validation costs about a second (jsonschema on the whole tree) and every job loads the params: the
    Snakefile validates once before any job runs and leaves a stamp named by the fingerprint of the values
    and the schema files; a job started by `dvc repro` after `dvc exp run -S` finds no stamp and validates.
    """
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    blob += b"".join(p.read_bytes() for p in sorted(SCHEMAS.glob("*.schema.yaml")))
    stamp = cache / hashlib.sha256(blob).hexdigest()
    if stamp.exists():
        return
    validate(params)
    cache.mkdir(parents=True, exist_ok=True)
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


def leaf_keys(tree, prefix: str) -> list[str]:
    """Dotted keys of every leaf under `prefix` (what DVC lists under a stage's params)."""
    if isinstance(tree, dict):
        return [k for key, sub in tree.items() for k in leaf_keys(sub, f"{prefix}.{key}")]
    return [prefix]


def params_hash(values) -> str:
    """A short, order-independent fingerprint of the values a step used."""
    blob = json.dumps(values, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]
