"""One multi-view multi-label data set (views + complete labels) from a generator or the catalog files."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_npz
from workflow.core.step import Step
from workflow.lib import mfeat

from . import data as D

READS = ("scsd.datasets.{dataset}",)


def build(p: dict, raw: list[Path]) -> dict:
    source = p["source"]
    if source == "synth":
        g = p["generator"]
        return D.synth(g["seed"], n=g["n"], dims=tuple(g["dims"]), noise=tuple(g["noise"]), label_noise=g["label_noise"])
    if source == "mfeat":
        return D.mfeat_data(mfeat.paths_by_view(raw))
    if source == "yeast":
        return D.yeast(pd.read_csv(raw[0]), p["n_views"])
    raise ValueError(f"unknown source '{source}' (synth, mfeat, yeast)")


def main(argv=None):
    step = Step("scsd", "prepare", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[], help="catalog files (none for the generator)")
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    d = build(p, args.raw)
    write_npz(args.out, y=d["y"], view_names=np.array(d["view_names"]), **{f"x{v}": x for v, x in enumerate(d["views"])})
    step.finish(metrics={"samples": len(d["y"]), "views": len(d["views"]), "labels": d["y"].shape[1],
                         "label_cardinality": float(d["y"].sum(1).mean())}, outputs=[args.out])


if __name__ == "__main__":
    main()
