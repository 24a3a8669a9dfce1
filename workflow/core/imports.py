"""The code a step runs, derived from its imports: every module under workflow/ that it imports, directly or not.

A rule lists these files as inputs (rules/common.smk), so editing any of them re-runs exactly the jobs whose
step imports it, and nothing else. Imports are read from the source (``ast``), not by importing it: the DAG
is built without loading torch or MLflow. Imports inside functions count too (they are code the step may run),
and so do the packages' ``__init__.py`` files, which Python runs on the way.
"""
from __future__ import annotations

import ast
import hashlib
import json
from functools import lru_cache
from pathlib import Path

from .io import write_text

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "workflow"
# Parsing every step's modules took ~0.9 s of each `snakemake` start; the imports of a source text never change,
# so they are kept here, keyed by the text's hash (git-ignored; deleting it only costs one slower start).
CACHE = ".cache/imports.json"


def module_file(module: str, root: Path = ROOT) -> Path | None:
    """workflow.a.b -> workflow/a/b.py or workflow/a/b/__init__.py (None outside the project)."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module of a `from X import ...` (resolving `from . import` / `from .x import`)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    return ".".join(parts[:keep] + ([node.module] if node.module else []))


@lru_cache(maxsize=None)
def _cache(root: Path) -> dict:
    try:
        return json.loads((root / CACHE).read_text())
    except (OSError, ValueError):
        return {}


def _save(root: Path) -> None:
    """Write the cache once per closure that parsed something (not once per parsed module)."""
    write_text(root / CACHE, json.dumps(_cache(root)))  # atomic: parallel snakemake starts never read half a file


@lru_cache(maxsize=None)
def direct_imports(module: str, root: Path = ROOT) -> frozenset[str]:
    """The project modules one module imports (a `from pkg import name` counts name when it is a module)."""
    source = module_file(module, root).read_bytes()
    key = f"{module}:{hashlib.sha1(source).hexdigest()}"
    if key not in _cache(root):
        _cache(root)[key] = sorted(imported_names(module, source, root))
    # which names are modules is decided now, not cached: a module may have been added since
    return frozenset(m for m in _cache(root)[key] if module_file(m, root))


def imported_names(module: str, source: bytes, root: Path = ROOT) -> set[str]:
    """Every name under workflow/ that the source imports, module or not."""
    path = module_file(module, root)
    tree = ast.parse(source, filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path.name == "__init__.py")
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in found if m.split(".")[0] == PACKAGE}


def with_packages(module: str) -> list[str]:
    """A module and the packages Python initialises to import it: workflow, workflow.a, workflow.a.b."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@lru_cache(maxsize=None)
def closure(module: str, root: Path = ROOT) -> tuple[str, ...]:
    """Every project module that importing `module` runs, sorted."""
    seen, todo, known = set(), [module], len(_cache(root))
    while todo:
        current = todo.pop()
        for m in with_packages(current):
            if m not in seen and module_file(m, root):
                seen.add(m)
                todo += sorted(direct_imports(m, root) - seen)
    if len(_cache(root)) != known:
        _save(root)
    return tuple(sorted(seen))


def code_files(module: str, root: Path = ROOT) -> list[str]:
    """The source files of closure(module), relative to the project root (what a rule lists as `code`)."""
    if module_file(module, root) is None:
        raise ValueError(f"no module {module} under {root / PACKAGE} (check the step name in the rule)")
    return [str(module_file(m, root).relative_to(root)) for m in closure(module, root)]
