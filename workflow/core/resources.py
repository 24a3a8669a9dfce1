"""Per-rule resources (memory, run time) a cluster job asks for: workflow/resources.yaml, read when the DAG is built.

The file is written by `make resources` (workflow/tools/resources.py) from what the jobs used in a measured default
run; rules/common.smk's measured() gives each rule its entry, and a rule not measured yet (a new paper before its
first default run) FALLBACK until the next refresh.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .params import ROOT

RESOURCES = ROOT / "workflow" / "resources.yaml"
FALLBACK = {"mem_mb": 4096, "runtime": 60}


def load(path: Path = RESOURCES) -> dict[str, dict]:
    return yaml.safe_load(path.read_text()) or {} if path.exists() else {}
