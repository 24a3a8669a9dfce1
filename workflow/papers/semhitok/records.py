"""The jobs' records as tables, found through the plan: one row per tokenizer run, one per frozen-network set.
Read by the evaluate and plot steps (a step never imports another step)."""
from __future__ import annotations

import pandas as pd

from workflow.core.io import read_json

from . import plan


def runs_table(p: dict) -> pd.DataFrame:
    return pd.DataFrame([read_json(path) | {"dataset": ds} for (ds, _, _), path in zip(plan.runs(p), plan.run_paths(p))])


def nets_table(p: dict) -> pd.DataFrame:
    return pd.DataFrame([read_json(plan.nets_summary(ds, s)) | {"dataset": ds} for ds, s in plan.nets_jobs(p)])
