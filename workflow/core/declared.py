"""What a step reads: the params.yaml sections its module declares, and the typed, read-only view of them it gets.

Each step module says, near its top, which sections it reads, as string literals with the rule's wildcards::

    READS = ("cosa.datasets.{dataset}.lookback", "cosa.tta")

and, where the rule stamps a value the step derives from other sections instead of the sections themselves
(rules/common.smk `stamp(..., derived=...)`), those sections too::

    PLAN_READS = ("scsd.plan", "scsd.datasets")  # read only to find this job's share of the plan

The rule stamps their values from there (`stamp=stamp("papers.cosa.tta")`, read from the source by
:func:`declaration`, without importing the step), so the step module is the one place that says what it reads.
The step (workflow/core/step.py) checks that the sections it was given are its READS, and gets them as
:class:`Params`: a dict that holds exactly their values, whose fields and types come from the paper's schema, and
that answers a key outside them with an error naming the step and the fix.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from .params import ROOT, SCHEMAS, ParamsError, read_yaml

DECLARATIONS = ("READS", "PLAN_READS")


def source_file(module: str, root: Path = ROOT) -> Path:
    """papers.cosa.tta -> workflow/papers/cosa/tta.py (what a rule's step(...) names)."""
    return root / "workflow" / Path(*module.split(".")).with_suffix(".py")


@lru_cache(maxsize=None)
def declaration(module: str, root: Path = ROOT) -> dict[str, tuple[str, ...]]:
    """{'READS': (...), 'PLAN_READS': (...)} of a step module, read from its source as literals.

    Only the module's head (what comes before its first function or class) is parsed: the Snakefile asks this of
    every step, and parsing whole modules cost 0.3 s of each start."""
    path = source_file(module, root)
    text = path.read_text()
    body = re.search(r"^(def|async def|class|@)\b", text, re.M)
    found = {}
    for node in ast.parse(text[: body.start()] if body else text, filename=str(path)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in DECLARATIONS:
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = None
            if not isinstance(value, tuple) or not all(isinstance(s, str) for s in value):
                raise ParamsError(f"{path.relative_to(root)}: {node.targets[0].id} must be a tuple of string literals "
                                  "(the params.yaml sections the step reads, with the rule's wildcards)")
            found[node.targets[0].id] = value
    if "READS" not in found:
        raise ParamsError(f"{path.relative_to(root)} declares no READS: add `READS = (...)` near its top, the "
                          "params.yaml sections the step reads (`READS = ()` for none), before its first function")
    return {"READS": found["READS"], "PLAN_READS": found.get("PLAN_READS", ())}


def matches(pattern: str, name: str) -> bool:
    """Whether a section name is a declared pattern with its wildcards filled in (one name part each)."""
    regex = "".join(r"[^.]+" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{\w+\})", pattern))
    return re.fullmatch(regex, name) is not None


def check_given(module: str, reads: tuple[str, ...], given: list[str]) -> None:
    """The sections a job was given (--params) are its module's READS, in order: the rule and the step cannot drift."""
    if len(reads) != len(given) or not all(matches(r, g) for r, g in zip(reads, given)):
        raise ParamsError(f"{module} was given the params sections {given}, but declares READS = {reads} in "
                          f"{source_file(module.removeprefix('workflow.')).relative_to(ROOT)}: its rule must take "
                          f'`stamp=stamp("{module.removeprefix("workflow.")}")` (rules/common.smk)')


# ---- the typed view --------------------------------------------------------------------------------------------

JSON_TYPES = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict),
              "null": lambda v: v is None}


@lru_cache(maxsize=None)
def paper_schema(slug: str) -> dict:
    """The schema of one top-level params section: the paper's own file, else its part of params.schema.yaml."""
    own = SCHEMAS / f"{slug}.schema.yaml"
    if own.is_file():
        return read_yaml(own)
    return read_yaml(SCHEMAS / "params.schema.yaml").get("properties", {}).get(slug, {})


def resolved(node: dict, root: dict) -> dict:
    """A schema node with its local '$ref' (#/$defs/...) followed."""
    while isinstance(node, dict) and node.get("$ref", "").startswith("#/"):
        target = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node if isinstance(node, dict) else {}


def section_schema(dotted: str) -> dict:
    """The schema node of a params section ({} where the schema does not say)."""
    slug, *parts = dotted.split(".")
    root = paper_schema(slug)
    node = resolved(root, root)
    for part in parts:
        props = node.get("properties", {})
        if part in props:
            node = resolved(props[part], root)
        elif isinstance(node.get("additionalProperties"), dict):
            node = resolved(node["additionalProperties"], root)
        else:
            return {}
    return node


def field_types(node: dict) -> tuple[str, ...]:
    kind = node.get("type")
    return tuple(kind) if isinstance(kind, list) else (kind,) if kind else ()


def fields(dotted: str, value) -> dict[str, tuple[str, ...]]:
    """The fields a section gives the flat view, with their schema types (() where the schema names none): a
    mapping section gives its keys (the schema's properties, optional ones too), any other its last name part."""
    node = section_schema(dotted)
    if not isinstance(value, dict):
        return {dotted.rsplit(".", 1)[-1]: field_types(node)}
    props = node.get("properties", {})
    root = paper_schema(dotted.split(".")[0])
    return {key: field_types(resolved(props.get(key, {}), root)) for key in [*props, *(k for k in value if k not in props)]}


def check_types(dotted: str, value) -> None:
    """Each value of a section has its schema type (a ParamsError names the section, the key and the type)."""
    items = value.items() if isinstance(value, dict) else [(dotted.rsplit(".", 1)[-1], value)]
    types = fields(dotted, value)
    for key, v in items:
        expected = types.get(key, ())
        if expected and not any(JSON_TYPES[t](v) for t in expected if t in JSON_TYPES):
            raise ParamsError(f"params section '{dotted}': '{key}' is {v!r} ({type(v).__name__}), its schema wants "
                              f"{' or '.join(expected)} (workflow/schemas/{dotted.split('.')[0]}.schema.yaml)")


class Params(dict):
    """The values of the sections a step declared, merged into one flat, read-only mapping: ``p["lr"]``, ``p.lr``,
    ``p.get("lr")``, ``"lr" in p`` as a dict, with the same objects params.yaml gives (an int stays an int).

    ``fields`` maps each key the sections define (the schema's optional ones too) to its schema types. A key outside
    them is no silent default: reading it raises a ParamsError (also a KeyError) that names the step and the fix."""

    def __init__(self, values: dict, owner: str = "this step", fields: dict | None = None):
        super().__init__(values)
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "fields", dict(fields) if fields is not None else {k: () for k in values})

    def undeclared(self, key) -> ParamsError:
        module = self.owner.removeprefix("workflow.")
        where = source_file(module).relative_to(ROOT)
        return UndeclaredParam(f"{module} reads params key {key!r}, which none of the sections it declares holds "
                               f"(its keys: {', '.join(sorted(self.fields)) or 'none'}): add its section to READS in "
                               f"{where}")

    def __missing__(self, key):
        raise self.undeclared(key)

    def get(self, key, default=None):
        if key not in self and key not in self.fields:
            raise self.undeclared(key)
        return super().get(key, default)

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        return self[key]

    def __reduce__(self):  # copies and pickles keep the view (dict's own would call __init__ without its values)
        return (Params, (dict(self), self.owner, self.fields))

    def _read_only(self, *args, **kwargs):
        raise TypeError(f"the params of {self.owner} are read-only: change params.yaml (or the profile) instead")

    __setitem__ = __delitem__ = __setattr__ = __ior__ = update = pop = popitem = setdefault = clear = _read_only


class UndeclaredParam(ParamsError, KeyError):
    """A key outside the sections a step declared (a KeyError too: `except KeyError` code keeps working)."""

    def __str__(self):  # KeyError's own quotes the message
        return self.args[0]


def view(values: dict[str, object], owner: str) -> Params:
    """The flat view of the sections `values` ({'cosa.tta': {...}, ...}) for the step `owner`, types checked."""
    merged, types = {}, {}
    for name, value in values.items():
        check_types(name, value)
        clash = set(merged) & (set(value) if isinstance(value, dict) else {name.rsplit(".", 1)[-1]})
        if clash:
            raise ParamsError(f"sections {list(values)} both define {sorted(clash)}")
        merged.update(value if isinstance(value, dict) else {name.rsplit(".", 1)[-1]: value})
        types.update(fields(name, value))
    return Params(merged, owner, types)


def subtree(values: dict[str, object], prefix: str, owner: str) -> Params:
    """The declared sections under `prefix`, nested as in params.yaml ({'lnsp.teachers': t} -> {'teachers': t}), for a
    paper's plan functions, which take its sub-tree: they see the declared sections and nothing else."""
    out: dict = {}
    for name in sorted(values, key=lambda n: n.count(".")):  # a whole section first: its parts are in it already
        if not name.startswith(prefix + "."):
            continue
        *path, last = name[len(prefix) + 1:].split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            node.setdefault(last, values[name])
    return Params(out, owner, {k: () for k in out})

