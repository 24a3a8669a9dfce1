"""Per-rule resources (memory, run time) a cluster job asks for: workflow/resources.yaml, read when the DAG is built.

The file is written by `make resources` (workflow/tools/resources.py) from what the jobs used in a measured default
run; rules/common.smk's measured() gives each rule its entry, and a rule not measured yet (a new paper before its
first default run) FALLBACK until the next refresh.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .params import ROOT
from .records import read_record

RESOURCES = ROOT / "workflow" / "resources.yaml"
FALLBACK = {"mem_mb": 4096, "runtime": 60}


def load(path: Path = RESOURCES) -> dict[str, dict]:
    return yaml.safe_load(path.read_text()) or {} if path.exists() else {}


def record_of(bench: Path) -> dict | None:
    """The run record beside a benchmark file (logs/ instead of bench/): None for none, or a failed job's empty
    file."""
    return read_record(Path(str(bench).replace("/bench/", "/logs/", 1)).with_suffix(".run.json"))


def peak_mb(bench_row: dict, record: dict | None) -> float:
    """A job's peak memory: the benchmark's, or the step's own where it is larger (a job forked from the zygote,
    workflow/core/zygote.py: the benchmark then measured only the process that waited for it)."""
    rss = bench_row["max_rss"]
    measured = float(rss) if rss not in ("", "-", "NA") else 0.0
    return max(measured, float((record or {}).get("max_rss_mb") or 0.0))
