"""One method on one data set with one seed, through every yearly task in order (year t starts from year t-1)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workflow.core.io import read_npz, write_json
from workflow.core.step import Step, seed_everything
from workflow.lib.timeseries import chrono_split, sliding_windows

from . import methods, models

READS = ("stbp.windows", "stbp.model", "stbp.train.{dataset}")


def year_windows(x: np.ndarray, split, x_len: int, y_len: int) -> dict:
    """Train/val/test windows of one year; inputs z-scored with the train part's mean and std (one scalar
    pair, as TrafficStream/STBP; missing inputs -> 0 = the mean), targets left in raw units (NaN = missing)."""
    parts = chrono_split(len(x), tuple(split))
    tr = x[parts["train"][0]:parts["train"][1]]
    mu, sd = float(np.nanmean(tr)), float(np.nanstd(tr)) or 1.0
    out = {}
    for name, part in parts.items():
        xi, yi = sliding_windows(x, part, x_len, y_len)
        xi = np.nan_to_num((xi - mu) / sd, nan=0.0)
        out[name] = (torch.as_tensor(xi, dtype=torch.float32), torch.as_tensor(yi, dtype=torch.float32))
    return out


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of range(n) that moves every index (identity for n < 2)."""
    if n < 2:
        return np.arange(n)
    while True:
        perm = rng.permutation(n)
        if (perm != np.arange(n)).all():
            return perm


def evaluate_year(model, win: dict, nodes, adj, is_new, node_type) -> dict:
    """Test metrics of one year: horizons 3/6/12 + average, and MAE on new / old / night-profile nodes.

    ``nodes[i]`` is the node-specific row (bank / prompt) that node i reads; only these rows see it."""
    pred = models.predict(model, win["test"][0], nodes, adj).numpy()
    true = win["test"][1].numpy()
    out = methods.forecast_metrics(pred, true)
    out["mae_new"] = methods.masked_mae(pred, true, is_new) if is_new.any() else float("nan")
    out["mae_old"] = methods.masked_mae(pred, true, ~is_new)
    night = node_type == methods.NIGHT
    out["mae_night"] = methods.masked_mae(pred, true, night) if night.any() else float("nan")
    return out


def run(method: str, data: dict, seed: int, p: dict, log=print) -> dict:
    """Every year in order; returns per-year records and the backward check (final model on year 0's test).

    Each year is also tested with the node-specific rows shuffled across nodes (a derangement, seeded): the
    negative control of the accuracy claims, the same trained model with its per-node knowledge misassigned
    (``shuffled_*`` columns)."""
    seed_everything(seed)
    n_years = int(data["n_years"])
    model, records, first, curves = None, [], None, {}
    for y in range(n_years):
        x = data[f"x_{y}"]
        n = x.shape[1]
        win = year_windows(x, p["split"], p["x_len"], p["y_len"])
        nodes, adj = torch.arange(n), models.normalised_adjacency(data[f"adj_{y}"])
        model, trains = models.carry_over(method, model, y, n, p["d"], p["dropout"])
        if y == 0 and getattr(model, "shuffle_bank", False):
            model.seed_shuffle(seed)  # the placebo's permutations: one stream per training seed
        fit = models.fit(model, win["train"], win["val"], nodes, adj, lr=p["lr"], batch=p["batch"],
                         max_epochs=p["max_epochs"] if trains else 0, patience=p["patience"], seed=seed + 1000 * y)
        is_new, kind = data[f"is_new_{y}"].astype(bool), data[f"node_type_{y}"]
        shuffled = torch.as_tensor(derangement(n, np.random.default_rng([seed, y])))
        rec = {"year": y, "n_nodes": n, "n_new": int(data[f"is_new_{y}"].sum()), "trained": bool(trains),
               "trainable": models.trainable_count(model) if trains else 0,
               "total_params": sum(q.numel() for q in model.parameters()), "d": p["d"],
               **{k: fit[k] for k in ("epochs", "best_epoch", "best_val_mae", "seconds", "cpu_seconds")},
               **evaluate_year(model, win, nodes, adj, is_new, kind),
               **{f"shuffled_{k}": v for k, v in evaluate_year(model, win, shuffled, adj, is_new, kind).items()}}
        records.append(rec)
        curves[f"val_mae_y{y}"] = fit["curve"]
        log(f"{method} year {y}: N={n} epochs={rec['epochs']} trainable={rec['trainable']} "
            f"{rec['seconds']:.1f}s test MAE={rec['mae_avg']:.3f}")
        if y == 0:
            first = (win, nodes, adj, data["node_type_0"])
    win0, nodes0, adj0, kind0 = first
    back = evaluate_year(model, win0, nodes0, adj0, np.zeros(len(nodes0), bool), kind0)
    return {"method": method, "seed": seed, "years": records, "curves": curves,
            "backward": {"mae_year0_final": back["mae_avg"], "mae_year0_initial": records[0]["mae_avg"]}}


def main(argv=None):
    step = Step("stbp", "train", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--dataset", required=True, help="the data set's name (its params section, its rows' label)")
    step.parser.add_argument("--method", choices=sorted(models.METHODS), required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    result = run(args.method, read_npz(args.data), args.seed, p, step.log)
    result["dataset"] = args.dataset
    write_json(args.out, result)
    ys = result["years"]
    step.finish(metrics={"mae_avg": float(np.mean([r["mae_avg"] for r in ys])),
                         **{f"mae_y{r['year']}": r["mae_avg"] for r in ys},
                         **{f"seconds_y{r['year']}": r["seconds"] for r in ys},
                         "mae_year0_final": result["backward"]["mae_year0_final"]},
                curves=result["curves"], outputs=[args.out])


if __name__ == "__main__":
    main()
