"""Benchmark: how much of the pipeline's job time is spent outside the steps' own work (prints figures).

    python bench/job_overhead.py                 # after a run: per rule and in total, from results/
    python bench/job_overhead.py --imports       # what a fresh interpreter pays for each library (3 repeats)

A job's wall time is Snakemake's benchmark file (results/<paper>/bench/...tsv); its own work is the run record's
`compute_seconds` (from the end of Step.start to Step.finish: the step's compute and its writes). The rest is
overhead: the interpreter, imports, parameter loading and validation, the run record. Track jobs (MLflow) have no
run record: they are shown apart, as the cost of tracking.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SNIPPETS = {
    "python (empty)": "pass",
    "import numpy": "import numpy",
    "import pandas": "import pandas",
    "import torch": "import torch",
    "import torch + a first optimizer": "import torch; torch.optim.AdamW(torch.nn.Linear(2, 2).parameters())",
    "import seaborn": "import seaborn",
    "import mlflow": "import mlflow",
    "step start (params + schema)": "from workflow.core.step import Step; Step('x', 'y').start([])",
}


def wall_seconds(tsv: Path) -> float:
    with open(tsv) as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return float(rows[-1]["s"])


def jobs(results: Path) -> list[dict]:
    """(rule, wall, compute) of every job with both a benchmark file and a run record."""
    out = []
    for rec_path in results.glob("*/logs/**/*.run.json"):
        paper_dir = rec_path.parents[len(rec_path.relative_to(results).parts) - 2]
        job = rec_path.relative_to(paper_dir / "logs")
        tsv = paper_dir / "bench" / job.parent / (job.name.removesuffix(".run.json") + ".tsv")
        try:
            rec = json.loads(rec_path.read_text())
        except ValueError:  # a job killed before it wrote its record (the rerun will)
            continue
        if tsv.exists():  # records before compute_seconds existed: `seconds` (includes loading the params)
            out.append({"rule": rec["rule"], "wall": wall_seconds(tsv), "compute": rec.get("compute_seconds", rec["seconds"])})
    for tsv in results.glob("*/bench/track.tsv"):
        out.append({"rule": "track (MLflow)", "wall": wall_seconds(tsv), "compute": 0.0})
    return out


def report(rows: list[dict]) -> None:
    by_rule: dict[str, list] = {}
    for r in rows:
        by_rule.setdefault(r["rule"], []).append(r)
    print(f"{'rule':40s} {'jobs':>5s} {'wall s':>9s} {'own work s':>10s} {'overhead s/job':>14s} {'overhead %':>10s}")
    for rule, rs in sorted(by_rule.items(), key=lambda kv: -sum(r["wall"] for r in kv[1])):
        wall, comp = sum(r["wall"] for r in rs), sum(r["compute"] for r in rs)
        print(f"{rule:40s} {len(rs):5d} {wall:9.1f} {comp:10.1f} {(wall - comp) / len(rs):14.2f} {100 * (wall - comp) / wall:9.1f}%")
    wall, comp = sum(r["wall"] for r in rows), sum(r["compute"] for r in rows)
    print(f"{'ALL JOBS':40s} {len(rows):5d} {wall:9.1f} {comp:10.1f} {(wall - comp) / len(rows):14.2f} {100 * (wall - comp) / wall:9.1f}%")


def imports(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MLFLOW_TRACKING_URI=f"sqlite:///{tmp}/bench.db", MLFLOW_DISABLE_TELEMETRY="true")
        print(f"{'what':32s} {'median s':>9s} {'min s':>7s}   ({repeat} fresh interpreters each)")
        for name, code in SNIPPETS.items():
            times = []
            for _ in range(repeat):
                out = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter(); {code}; "
                                      "print(time.perf_counter() - t)"], cwd=ROOT, env=env, capture_output=True, text=True,
                                     check=True)
                times.append(float(out.stdout.strip().splitlines()[-1]))
            print(f"{name:32s} {statistics.median(times):9.2f} {min(times):7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--imports", action="store_true", help="measure library import costs instead")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.imports:
        imports(args.repeat)
        return
    rows = jobs(args.results)
    if not rows:
        raise SystemExit(f"no jobs with benchmark files and run records under {args.results}: run the pipeline first")
    report(rows)


if __name__ == "__main__":
    main()
