"""The line between a paper's steps and its library modules (issue 33), the same in every paper:

- a step is a module with a top-level ``main``, and a rule names it in ``step("papers.<slug>.<module>", ...)``;
- every other module of a paper is a library module: no ``main``, and it imports no step;
- a step imports library modules, never another step;
- nothing under workflow/papers parses a path back into its parts: a step finds its files through the paper's
  plan (``plan.py``), as the rule file does.

Read from the sources (``ast``), nothing is imported.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from workflow.papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]
# Modules with a `main` that no rule runs, with the reason: a program a user runs by hand.
BY_HAND = {"workflow.papers.simuhome.llm": "the LLM agent for a user's own endpoint (README: run your own agent)"}


def paper_modules() -> dict[str, Path]:
    return {f"workflow.papers.{path.parent.name}.{path.stem}": path
            for slug in PAPERS for path in sorted((ROOT / "workflow" / "papers" / slug).glob("*.py"))
            if path.stem != "__init__"}


def rule_steps() -> set[str]:
    found = set()
    for path in (ROOT / "rules").glob("*.smk"):
        found |= {f"workflow.{m}" for m in re.findall(r'step\(\s*"(papers\.[\w.]+)"', path.read_text())}
    return found


def has_main(path: Path) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in ast.parse(path.read_text()).body)


def imported(module: str, path: Path) -> set[str]:
    """The absolute names a module imports (a `from . import x` counts the package's x)."""
    package, names = module.rsplit(".", 1)[0], set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module if not node.level else ".".join([package] + ([node.module] if node.module else []))
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return names


def test_every_step_a_rule_runs_is_a_module_with_main():
    modules, steps = paper_modules(), rule_steps()
    missing = sorted(s for s in steps if s not in modules)
    assert not missing, f"rules name steps that are not modules of a paper: {missing}"
    no_main = sorted(s for s in steps if not has_main(modules[s]))
    assert not no_main, f"steps without a main(): {no_main}"


def test_only_steps_have_main():
    modules, steps = paper_modules(), rule_steps()
    stray = sorted(m for m, path in modules.items() if has_main(path) and m not in steps and m not in BY_HAND)
    assert not stray, (f"{stray} have a main() but no rule runs them: a library module has no main (move the "
                       "program into a step named in the paper's rule file), or list a program run by hand in BY_HAND")
    assert all(has_main(modules[m]) for m in BY_HAND)


def test_no_module_imports_a_step():
    modules, steps = paper_modules(), rule_steps()
    bad = sorted(f"{m} imports {s}" for m, path in modules.items() for s in imported(m, path) & steps if s != m)
    assert not bad, f"a step is a program, not a library: move what is shared into a library module ({bad})"


PARSING = [r"\.stem\.r?split\(", r"args\.\w+\.(?:stem|name)\b", r"\.stem\.remove(?:prefix|suffix)\(", r"\.parts\[",
           r"\.(?:match|fullmatch|search)\([\w.]*\b(?:stem|name)\)",  # a pattern matched on a file name
           r"re\.(?:fullmatch|match|search)\(r?\"[^\"]*\\\.(?:npz|json|jsonl|csv|pt)"]


@pytest.mark.parametrize("pattern", PARSING)
def test_no_path_is_parsed_back_into_its_parts(pattern):
    """A step gets a job's values from the plan (the cells it lists) or from its own arguments, never from a file name."""
    hits = sorted(f"{path.relative_to(ROOT)}:{i}" for path in paper_modules().values()
                  for i, line in enumerate(path.read_text().splitlines(), 1) if re.search(pattern, line))
    assert not hits, f"path parsing ({pattern}): {hits}"
