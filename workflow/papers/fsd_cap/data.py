"""One graph with node features and labels: the contextual SBM generator, or a kNN graph over real digits (mfeat).

csbm: degree-corrected contextual SBM (methods.csbm), largest connected component kept.
mfeat: UCI Multiple Features; the graph is the symmetrised kNN graph of one standardised view (`graph_view`),
the node features another standardised view (`feature_view`) with the real digit labels, so the graph does not
simply encode the very features that are then imputed.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step
from workflow.lib import graphs, mfeat

from . import methods

READS = ("fsd_cap.datasets.{dataset}", "fsd_cap.csbm")


def build(p: dict, raw: list[Path]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(adjacency, X, y) of the data set described by the merged params `p`."""
    if p["source"] == "csbm":
        edges, x, y = methods.csbm(p["n"], p["classes"], p["avg_degree"], p["homophily"], p["dim"], p["words"],
                                   p["mix"], p["pareto"], p["topic_alpha"], p["graph_seed"])
        a = graphs.adjacency(edges, p["n"])
    elif p["source"] == "mfeat":
        views, y = mfeat.load_views(mfeat.paths_by_view(raw, (p["graph_view"], p["feature_view"])))
        a = graphs.knn_graph(mfeat.standardize(views[p["graph_view"]]), p["k"])
        x = mfeat.standardize(views[p["feature_view"]])
    else:
        raise ValueError(f"unknown source {p['source']!r}: use csbm or mfeat")
    return methods.keep_largest_component(a, x, y)


def main(argv=None):
    step = Step("fsd_cap", "data", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[], help="catalog files (mfeat views)")
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    a, x, y = build(p, args.raw)
    write_npz(args.out, edges=graphs.edge_list(a), x=x.astype(np.float64), y=y.astype(np.int64))
    metrics = {"nodes": a.shape[0], "edges": int(a.nnz // 2), "features": x.shape[1], "classes": int(y.max()) + 1,
               "avg_degree": a.nnz / a.shape[0], "edge_homophily": graphs.edge_homophily(a, y)}
    step.finish(metrics=metrics, outputs=[args.out])


if __name__ == "__main__":
    main()
