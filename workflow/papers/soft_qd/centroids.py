"""The fixed evaluation archives, one per behaviour dimension m that is used: ribs CVT centroids over [0,1]^m (as the
paper's src/evaluate.py: 512 cells, seed 232323), shared by every method's QD score at that m. One job makes them all
(the few m's of the plan), so ribs is loaded once."""
from __future__ import annotations

import re
from pathlib import Path

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import scores


def m_of(path: Path) -> int:
    """archives/m<m>.npz -> m."""
    match = re.fullmatch(r"m(\d+)\.npz", path.name)
    if not match:
        raise ValueError(f"{path}: expected archives/m<m>.npz")
    return int(match.group(1))


def main(argv=None):
    step = Step("soft_qd", "centroids", __doc__)
    step.parser.add_argument("--out", type=Path, nargs="+", required=True,
                             help="archives/m<m>.npz, one per m: the centroids (cells x m)")
    args, p = step.start(argv)
    for out in args.out:
        cents = scores.ribs_cvt_centroids(m_of(out), p["cells"], p["samples"], p["archive_seed"])
        write_npz(out, centroids=cents)
        step.log(f"m = {m_of(out)}: {len(cents)} cells")
    step.finish(metrics={"cells": p["cells"], "archives": len(args.out)}, outputs=args.out)


if __name__ == "__main__":
    main()
