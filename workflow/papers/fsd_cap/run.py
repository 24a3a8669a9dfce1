"""Every planned method at one seed on one graph: impute the missing features, then node classification (GCN)
and, for the methods of the link grid at the link seeds, link prediction (GAE); every mask kind of the grid at
the main missing rate, plus the missing-rate sweep where the sweep asks for it.

A seed fixes the node split, the missing-feature masks, the edge split and the models' initialisation, so every
method sees the same split and mask at the same seed. One job runs all methods of a (graph, seed) so that the
FSD-CAP variants share stage 1 and the pre-GNN: a variant (or control) differs from FSD-CAP only in what it
changes. Every downstream model selects its epoch on `val_sel`, validation nodes no imputer saw a label of.
``full`` (true features) has no mask: one row per task.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, write_json
from workflow.core.step import Step
from workflow.lib import graphs

from . import methods
from .plan import planned_methods

READS = ("fsd_cap.plan.{dataset}", "fsd_cap.tasks.{dataset}", "fsd_cap.split",
         "fsd_cap.missing", "fsd_cap.impute", "fsd_cap.gnn",
         "fsd_cap.link", "fsd_cap.sweep")

GNN_KEYS = ("hidden", "layers", "dropout", "lr", "weight_decay", "epochs", "patience")


def load_graph(path: Path):
    d = read_npz(path)
    return graphs.adjacency(d["edges"], len(d["y"])), d["x"], d["y"]


def mask_seed(seed: int, kind: str, rate: float) -> int:
    """Its own random stream per (seed, mask kind, rate), shared by every method."""
    return 1_000_003 * seed + 7919 * methods.MASKS.index(kind) + int(round(rate * 10_000))


def observed(x: np.ndarray, kind: str, rate: float, seed: int) -> np.ndarray:
    return methods.missing_mask(x.shape, kind, rate, mask_seed(seed, kind, rate))


def node_rows(names, a, x, y, split, kind, rate, p, gnn, seed) -> list[dict]:
    """Node classification of each named method at one mask; `full` ignores the mask (kind "none")."""
    mask = np.ones_like(x, dtype=bool) if kind == "none" else observed(x, kind, rate, seed)
    feats, seconds = methods.impute_all(names, a, x, mask, y, split, kind, p, gnn, seed)
    rows = []
    for m in names:
        r = graphs.train_node_classifier(a, feats[m], y, split["train"], split["val_sel"], split["test"], seed=seed, **gnn)
        rows.append({"method": m, "task": "node", "mask": kind, "rate": 0.0 if kind == "none" else rate,
                     "test_acc": r["test_acc"], "val_acc": r["val_acc"], "best_epoch": r["epoch"],
                     "rmse_missing": methods.rmse_missing(x, feats[m], mask), "impute_seconds": seconds[m],
                     "observed_frac": float(mask.mean())})
    return rows


def link_rows(names, a, x, y, split, kind, rate, p, gnn, link, edges, seed) -> list[dict]:
    """Imputation on the training graph only (held-out edges are unseen), then a GAE on the imputed features."""
    mask = np.ones_like(x, dtype=bool) if kind == "none" else observed(x, kind, rate, seed)
    feats, _ = methods.impute_all(names, edges["a_train"], x, mask, y, split, kind, p, gnn, seed)
    rows = []
    for m in names:
        r = graphs.train_link_predictor(edges, feats[m], hidden=link["gae_hidden"], out=link["gae_out"],
                                        lr=link["gae_lr"], epochs=link["gae_epochs"], seed=seed)
        rows.append({"method": m, "task": "link", "mask": kind, "rate": 0.0 if kind == "none" else rate,
                     "test_auc": r["test_auc"], "test_ap": r["test_ap"], "val_auc": r["val_auc"]})
    return rows


def settings(names: list[str], kinds: list[str], rate: float, extra: list[tuple[str, float, list[str]]]):
    """(mask kind, rate, methods) to run: `full` once without a mask, the others at every kind, then `extra`."""
    out = [("none", 0.0, ["full"])] if "full" in names else []
    imputers = [m for m in names if m != "full"]
    out += [(k, rate, imputers) for k in kinds if imputers]
    return out + [e for e in extra if e[2]]


def run(names: list[str], seed: int, dataset: str, a, x, y, p: dict) -> list[dict]:
    gnn = {k: p[k] for k in GNN_KEYS}
    link = {k: p[k] for k in ("gae_hidden", "gae_out", "gae_lr", "gae_epochs", "val_frac", "test_frac")}
    split = methods.per_class_split(y, p["dev"], p["train_per_class"], seed, p["cap_val_frac"])
    sweep = []
    if dataset == p["sweep_dataset"] and seed in p["sweep_seeds"]:
        swept = [m for m in p["sweep_methods"] if m != "full"]
        sweep = [(p["sweep_mask"], r, swept) for r in p["sweep_rates"] if not np.isclose(r, p["rate"])]
    rows = []
    for kind, rate, ms in settings(names, p["masks"], p["rate"], sweep):
        rows += node_rows(ms, a, x, y, split, kind, rate, p, gnn, seed)
    linked = [m for m in p["link_methods"] if m in names]
    if linked and seed in p["link_seeds"]:
        edges = graphs.split_edges(a, link["val_frac"], link["test_frac"], np.random.default_rng(seed))
        for kind, rate, ms in settings(linked, p["masks"], p["rate"], []):
            rows += link_rows(ms, a, x, y, split, kind, rate, p, gnn, link, edges, seed)
    return rows


def main(argv=None):
    step = Step("fsd_cap", "run", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--dataset", required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    names = planned_methods(step.values[f"fsd_cap.plan.{args.dataset}"], args.seed)
    a, x, y = load_graph(args.data)
    rows = run(names, args.seed, args.dataset, a, x, y, p)
    for r in rows:
        step.log(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    write_json(args.out, {"dataset": args.dataset, "seed": args.seed, "methods": names, "rows": rows})
    main_rows = {f"{r['task']}_{r['method']}_{r['mask']}": r.get("test_acc", r.get("test_auc")) for r in rows
                 if r["rate"] in (0.0, p["rate"])}
    step.finish(metrics=main_rows, outputs=[args.out])


if __name__ == "__main__":
    main()
