"""One forecasting data set: raw series (generator or catalog file) -> hourly/weekly matrix, chronological split, z-score."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import datasets

READS = ("cosa.datasets.{dataset}.source", "cosa.datasets.{dataset}.length", "cosa.generator", "cosa.split")


def from_raw(source: str, path: Path) -> tuple[np.ndarray, list[str]]:
    """Read a catalog file into a (time, channel) matrix at the resolution the experiment uses."""
    df = pd.read_csv(path)
    if source == "co2":  # weekly; a few missing weeks are linearly interpolated (spec)
        return df["co2"].interpolate(limit_direction="both").to_numpy()[:, None], ["co2"]
    if source == "vic_elec":  # half-hourly -> hourly: demand summed (MWh per hour), temperature averaged
        hourly = df[["Demand", "Temperature"]].groupby(np.arange(len(df)) // 2).agg({"Demand": "sum", "Temperature": "mean"})
        return hourly.to_numpy(), ["demand", "temperature"]
    if source == "EPF_FR_BE":  # hourly; one channel per (country, variable)
        wide = df.pivot(index="ds", columns="unique_id", values=["y", "gen_forecast", "system_load"]).sort_index()
        return wide.to_numpy(), [f"{c}_{v}" for v, c in wide.columns]
    raise ValueError(f"no reader for source '{source}'")


def build(source: str, raw: Path | None, length: int, split_fracs, seed: int, n_steps: int) -> dict:
    if source in ("ett_like", "ett_like_mixed"):
        shift = "mixed" if source == "ett_like_mixed" else "level"
        series = datasets.ett_like(seed, n_steps, shift=shift, fractions=tuple(split_fracs))
        names = [f"load{i}" for i in range(series.shape[1] - 1)] + ["oil_temperature"]
    else:
        series, names = from_raw(source, raw)
    if length:
        series = series[-length:]
    split = datasets.chrono_split(len(series), tuple(split_fracs))
    z, stats = datasets.zscore(series, split["train"])
    return {"series": z.astype(np.float64), "raw": series.astype(np.float64), "channels": np.array(names),
            **{f"split_{k}": np.array(v) for k, v in split.items()},
            **{f"stat_{k}": np.asarray(v) for k, v in stats.items()}}


def main(argv=None):
    step = Step("cosa", "prepare", __doc__)
    step.parser.add_argument("--raw", type=Path, help="catalog file (absent for generators)")
    step.parser.add_argument("--seed", type=int, required=True, help="the generator's seed (real data sets ignore it)")
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    data = build(p["source"], args.raw, p["length"], p["split"], args.seed, p["n_steps"])
    write_npz(args.out, **data)
    step.finish(metrics={"steps": len(data["series"]), "channels": data["series"].shape[1],
                         "test_minus_train_mean": float(data["series"][data["split_test"][0]:].mean())}, outputs=[args.out])


if __name__ == "__main__":
    main()
