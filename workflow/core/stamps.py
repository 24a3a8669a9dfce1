"""Stamps: one small file per job standing for everything the job depends on that is not a file of its own.

A job depends on a dozen source files (its step's imports) and on a few params.yaml sections. Listed as they
are, the sources cost Snakemake a dozen input files per job and the values a `params:` entry per rule (Snakemake
then imports pandas to serialise them): at 10,000 jobs that was most of the time spent building the DAG, and a
third of a no-op `snakemake`. Even one stamp for the code and one per section cost Snakemake about 0.1 ms per job and
input file (bench/dag_scale.py). So all of it goes, when the DAG is built, into one stamp per job under
.cache/stamps/, named after the step module (and, where the job's values differ from its rule's other jobs', a
key of the wildcards they depend on):

    <step module>[@<key>]   {"code": {path: sha1},       the module and everything it imports (imports.py)
                             "sections": [..],           the params.yaml sections it reads (its READS), in order,
                             "values": {section: ..},    as the profile resolves them
                             "derived": ..}              a value the rule computes for the job from other
                                                         sections (its PLAN_READS), where it has one

A stamp is rewritten only when its content changes, and Snakemake compares inputs under 1 MB by checksum, so a
stamp re-runs exactly the jobs whose code or values changed, like the files and values it stands for. dvc.yaml
lists the same stamps (DVC hashes them), written by its first stage, which builds the DAG as Snakemake does.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from .imports import code_files
from .io import write_text
from .params import ROOT, section

STAMPS = ".cache/stamps"
_UNSET = object()


def write(relative: str, content: dict, root: Path = ROOT) -> str:
    """Write the stamp if its content changed (atomic: parallel starts never read half a file); its path."""
    path = root / relative
    text = json.dumps(content, sort_keys=True, indent=1, default=str) + "\n"
    try:
        if path.read_text() == text:
            return relative
    except OSError:
        pass
    write_text(path, text)
    return relative


@lru_cache(maxsize=None)
def code(module: str, root: Path = ROOT) -> dict[str, str]:
    """A module's code: every project file importing it runs, with its content hash."""
    return {f: hashlib.sha1((root / f).read_bytes()).hexdigest() for f in code_files(module, root)}


def job(tree: dict, module: str, sections: list[str], key: str = "", derived=_UNSET, root: Path = ROOT) -> str:
    """The stamp of a job of `module` (workflow.papers.cosa.tta) that reads these params sections (a ParamsError
    names one that does not exist); key: what tells this job's stamp from its rule's others ('' if none does)."""
    content = {"code": code(module, root), "sections": list(sections),
               "values": {name: section(tree, name) for name in sections}}
    if derived is not _UNSET:
        content["derived"] = derived
    return write(f"{STAMPS}/{module}" + (f"@{key}" if key else ""), content, root)


def section_names(argument: str, root: Path = ROOT) -> list[str]:
    """What a step gets as --params: a section's name, or a job stamp's path -> the sections it reads."""
    if argument.startswith(STAMPS + "/"):
        return json.loads((root / argument).read_text())["sections"]
    return [argument]
