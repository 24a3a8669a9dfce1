"""One method at one seed on one graph: impute the missing features, then node classification (GCN) and, for the
methods of the link grid, link prediction (GAE); every mask kind of the grid at the main missing rate, plus the
missing-rate sweep where the sweep asks for it.

A seed fixes the node split, the missing-feature mask, the edge split and the models' initialisation, so every
method sees the same split and mask at the same seed. ``full`` (true features) has no mask: one row per task.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, write_json
from workflow.core.step import Step
from workflow.lib import graphs

from . import methods


def load_graph(path: Path):
    d = read_npz(path)
    return graphs.adjacency(d["edges"], len(d["y"])), d["x"], d["y"]


def mask_seed(seed: int, kind: str, rate: float) -> int:
    """Its own random stream per (seed, mask kind, rate), shared by every method."""
    return 1_000_003 * seed + 7919 * methods.MASKS.index(kind) + int(round(rate * 10_000))


def node_row(method, a, x, y, split, kind, rate, p, gnn, seed) -> dict:
    mask = np.ones_like(x, dtype=bool) if method == "full" else methods.missing_mask(x.shape, kind, rate, mask_seed(seed, kind, rate))
    t0 = time.time()
    z = methods.impute(method, a, x, mask, y, split, kind, p, gnn, seed)
    seconds = time.time() - t0
    r = graphs.train_node_classifier(a, z, y, split["train"], split["val"], split["test"], seed=seed, **gnn)
    return {"task": "node", "mask": "none" if method == "full" else kind, "rate": 0.0 if method == "full" else rate,
            "test_acc": r["test_acc"], "val_acc": r["val_acc"], "best_epoch": r["epoch"],
            "rmse_missing": methods.rmse_missing(x, z, mask), "impute_seconds": seconds,
            "observed_frac": float(mask.mean())}


def link_row(method, a, x, y, split, kind, rate, p, gnn, link, seed) -> dict:
    """Imputation on the training graph only (held-out edges are unseen), then a GAE on the imputed features."""
    rng = np.random.default_rng(seed)
    edges = graphs.split_edges(a, link["val_frac"], link["test_frac"], rng)
    mask = np.ones_like(x, dtype=bool) if method == "full" else methods.missing_mask(x.shape, kind, rate, mask_seed(seed, kind, rate))
    z = methods.impute(method, edges["a_train"], x, mask, y, split, kind, p, gnn, seed)
    r = graphs.train_link_predictor(edges, z, hidden=link["gae_hidden"], out=link["gae_out"], lr=link["gae_lr"],
                                    epochs=link["gae_epochs"], seed=seed)
    return {"task": "link", "mask": "none" if method == "full" else kind, "rate": 0.0 if method == "full" else rate,
            "test_auc": r["test_auc"], "test_ap": r["test_ap"], "val_auc": r["val_auc"]}


def run(method: str, seed: int, dataset: str, a, x, y, p: dict) -> list[dict]:
    gnn = {k: p[k] for k in ("hidden", "layers", "dropout", "lr", "weight_decay", "epochs", "patience")}
    link = {k: p[k] for k in ("gae_hidden", "gae_out", "gae_lr", "gae_epochs", "val_frac", "test_frac")}
    split = methods.per_class_split(y, p["dev"], p["train_per_class"], seed)
    kinds = ["none"] if method == "full" else p["masks"]
    settings = [(k, p["rate"]) for k in kinds]
    if dataset == p["sweep_dataset"] and method in p["sweep_methods"] and seed in p["sweep_seeds"] and method != "full":
        settings += [(p["sweep_mask"], r) for r in p["sweep_rates"] if r != p["rate"]]
    rows = [node_row(method, a, x, y, split, k, r, p, gnn, seed) for k, r in settings]
    if method in p["link_methods"]:
        rows += [link_row(method, a, x, y, split, k, p["rate"], p, gnn, link, seed) for k in kinds]
    return rows


def main(argv=None):
    step = Step("fsd_cap", "run", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--dataset", required=True)
    step.parser.add_argument("--method", required=True, choices=methods.METHODS)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    a, x, y = load_graph(args.data)
    rows = run(args.method, args.seed, args.dataset, a, x, y, p)
    for r in rows:
        step.log(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    write_json(args.out, {"dataset": args.dataset, "method": args.method, "seed": args.seed, "rows": rows})
    main_rows = {f"{r['task']}_{r['mask']}": r.get("test_acc", r.get("test_auc")) for r in rows if r["rate"] in (0.0, p["rate"])}
    step.finish(metrics=main_rows, outputs=[args.out])


if __name__ == "__main__":
    main()
