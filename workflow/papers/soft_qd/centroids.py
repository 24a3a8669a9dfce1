"""The fixed evaluation archives, one per behaviour dimension m that is used: ribs CVT centroids over [0,1]^m (as the
paper's src/evaluate.py: 512 cells, seed 232323), shared by every method's QD score at that m. One job makes them all
(the few m's of the plan), so ribs is loaded once."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import scores

READS = ("soft_qd.evaluation.cells", "soft_qd.evaluation.samples", "soft_qd.evaluation.archive_seed")


def main(argv=None):
    step = Step("soft_qd", "centroids", __doc__)
    step.parser.add_argument("--m", type=int, nargs="+", required=True, help="the behaviour dimensions (plan.archive_ms)")
    step.parser.add_argument("--out", type=Path, nargs="+", required=True,
                             help="the centroids (cells x m) of each --m, in its order (plan.archive_path)")
    args, p = step.start(argv)
    if len(args.m) != len(args.out):
        step.parser.error(f"{len(args.m)} values of --m but {len(args.out)} of --out")
    for m, out in zip(args.m, args.out):
        cents = scores.ribs_cvt_centroids(m, p["cells"], p["samples"], p["archive_seed"])
        write_npz(out, centroids=cents)
        step.log(f"m = {m}: {len(cents)} cells")
    step.finish(metrics={"cells": p["cells"], "archives": len(args.out)}, outputs=args.out)


if __name__ == "__main__":
    main()
