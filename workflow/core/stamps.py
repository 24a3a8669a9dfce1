"""Stamps: one small file standing for something a job depends on that is not one file of its own.

A job depends on a dozen source files (its step's imports) and on a few params.yaml sections. Listed as they
are, the sources cost Snakemake a dozen input files per job and the values a `params:` entry per rule (Snakemake
then imports pandas to serialise them): at 10,000 jobs that was most of the time spent building the DAG, and a
third of a no-op `snakemake`. So each is written, when the DAG is built, to a stamp under .cache/stamps/:

    code/<step module>          {"files": {path: sha1}}        the module and everything it imports (imports.py)
    params/<section>            {"sections": [..], "value": ..} one params.yaml section as the profile resolves it
    derived/<name>/<key>        {"sections": [..], "value": ..} a per-job value computed from sections (e.g. the
                                                                methods the plan runs in one cell)

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
def code(module: str, root: Path = ROOT) -> str:
    """The stamp of a step module's code: every project file importing it runs, with its content hash."""
    files = {f: hashlib.sha1((root / f).read_bytes()).hexdigest() for f in code_files(module, root)}
    return write(f"{STAMPS}/code/{module}", {"files": files}, root)


def params(tree: dict, name: str, root: Path = ROOT) -> str:
    """The stamp of one params section (a ParamsError names a section that does not exist)."""
    return write(f"{STAMPS}/params/{name}", {"sections": [name], "value": section(tree, name)}, root)


def derived(name: str, key: str, value, sections: list[str], root: Path = ROOT) -> str:
    """The stamp of one job's value computed from params sections (key: the job's wildcard values)."""
    return write(f"{STAMPS}/derived/{name}/{key}", {"sections": sections, "value": value}, root)


def section_name(path: str) -> str:
    """What a step gets as --params: a params stamp's path or a section's name -> the section's name."""
    return path.rsplit("/", 1)[-1]

