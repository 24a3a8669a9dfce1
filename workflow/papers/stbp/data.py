"""Yearly tasks of one data set: the expanding-network generator (stream) or the real pedestrian counts."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import methods

READS = ("stbp.data.{dataset}",)


def build(dataset: str, raw: Path | None, p: dict) -> list[dict]:
    if dataset == "stream":
        g = p["generator"]
        return methods.stream_traffic(g["seed"], g["years"], g["n0"], g["dn"], g["days"], night_from=g["night_from"],
                                      night_prob=g["night_prob"])
    if dataset == "pedestrian":
        if raw is None:
            raise ValueError("pedestrian needs --raw data/raw/pedestrian.csv (the catalog file)")
        years, _ = methods.pedestrian_years(pd.read_csv(raw), p["days"], p["join_days"])
        return years
    raise ValueError(f"unknown stbp data set '{dataset}' (known: stream, pedestrian)")


def pack(years: list[dict]) -> dict:
    """One .npz: per year y the arrays x_y (T, N_y), adj_y, node_type_y, is_new_y; old nodes keep their index."""
    out = {"n_years": np.array(len(years))}
    for y, task in enumerate(years):
        for key in ("x", "adj", "node_type", "is_new"):
            out[f"{key}_{y}"] = np.asarray(task[key])
    return out


def main(argv=None):
    step = Step("stbp", "data", __doc__)
    step.parser.add_argument("dataset", choices=["stream", "pedestrian"])
    step.parser.add_argument("--raw", type=Path, help="catalog file (pedestrian only)")
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    years = build(args.dataset, args.raw, p)
    write_npz(args.out, **pack(years))
    metrics = {f"nodes_y{y}": t["x"].shape[1] for y, t in enumerate(years)}
    metrics |= {"steps_per_year": years[0]["x"].shape[0], "mean_y0": float(np.nanmean(years[0]["x"])),
                "night_nodes_last": int((years[-1]["node_type"] == methods.NIGHT).sum())}
    step.finish(metrics=metrics, outputs=[args.out])


if __name__ == "__main__":
    main()
