"""Benchmark: what one pipeline job costs before it computes anything (prints figures; not a test).

    python bench/job_overhead.py [--repeat 3]

Measures, in fresh interpreters: the import cost of the libraries a step loads, a step's start (params load +
schema validation), and logging one run record to a throw-away SQLite MLflow store. These numbers are why the
papers use a few coarse jobs (e.g. one COSA job per table cell, all methods inside) rather than many tiny ones.
"""
from __future__ import annotations

import argparse
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
    "import torch": "import torch",
    "import pandas": "import pandas",
    "import mlflow": "import mlflow",
    "import seaborn": "import seaborn",
    "step start (params + schema)": "from workflow.core.step import Step; Step('x', 'y').start([])",
    "log one run record": (
        "import time; from workflow.core.step import Step; s = Step('bench', 'noop'); s.start(['--record', '{rec}']);"
        "s.finish(metrics={{'m': 1.0}}, curves={{'c': [(i, float(i)) for i in range(200)]}})"),
}


def timed(code: str, env: dict) -> float:
    out = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter(); {code}; "
                          "print(time.perf_counter() - t)"], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MLFLOW_TRACKING_URI=f"sqlite:///{tmp}/bench.db", MLFLOW_DISABLE_TELEMETRY="true")
        print(f"{'what':32s} {'median s':>9s} {'min s':>7s}   ({args.repeat} fresh interpreters each)")
        for name, code in SNIPPETS.items():
            times = [timed(code.format(rec=f"{tmp}/r{i}.run.json"), env) for i in range(args.repeat)]
            print(f"{name:32s} {statistics.median(times):9.2f} {min(times):7.2f}")


if __name__ == "__main__":
    main()
