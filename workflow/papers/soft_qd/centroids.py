"""The fixed evaluation archive of one behaviour dimension m: ribs CVT centroids over [0,1]^m (as the paper's
src/evaluate.py: 512 cells, seed 232323), shared by every method's QD score at that m."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import methods


def main(argv=None):
    step = Step("soft_qd", "centroids", __doc__)
    step.parser.add_argument("--m", type=int, required=True, help="behaviour-space dimension")
    step.parser.add_argument("--out", type=Path, required=True, help=".npz with the centroids (cells x m)")
    args, p = step.start(argv)
    cents = methods.ribs_cvt_centroids(args.m, p["cells"], p["samples"], p["archive_seed"])
    write_npz(args.out, centroids=cents)
    step.finish(metrics={"cells": len(cents)}, outputs=[args.out])


if __name__ == "__main__":
    main()
