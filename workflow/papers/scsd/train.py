"""One cell: a data set at a missing-view rate, one fold (= seed), every method the plan runs there (workflow/papers/
scsd/plan.py) -> per method: test metrics, view weights, codebook use. The methods share the fold's split and masks;
each starts from the seeds it would have in a job of its own, so a method's result does not depend on its cell."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workflow.core.io import read_npz, write_json
from workflow.core.step import Step, seed_everything

from . import data as D
from . import methods as M
from . import models, plan

READS = ("scsd.datasets.{dataset}", "scsd.run")
# read only to find the methods this cell runs (scsd.plan.cell_methods): the rule stamps that list, not these
PLAN_READS = ("scsd.plan", "scsd.datasets")


def load(path: Path) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
    z = read_npz(path)
    views = [z[f"x{v}"] for v in range(len(z["view_names"]))]
    return views, z["y"], [str(n) for n in z["view_names"]]


def fold_data(views, y, ds: dict, r_view: float, fold: int):
    split = D.incomplete_split(len(y), len(views), y.shape[1], fold, r_view=r_view, r_label=ds["missing_label"],
                               val_frac=ds["val_frac"], test_frac=ds["test_frac"], n_train=ds["n_train"],
                               label_flip=ds["label_flip"], y=y)
    return D.standardize_views(views, split["train"], split["view_mask"]), split


def per_view_ap(y, probs, vmask, idx) -> list[float]:
    """AP of each view's own classifier on the samples of `idx` that have the view (single-view quality)."""
    out = []
    for v, p in enumerate(probs):
        seen = vmask[idx, v] > 0
        out.append(M.multilabel_metrics(y[idx][seen], p[seen])["ap"] if seen.sum() > 5 else float("nan"))
    return out


def mean_weights(w, vmask) -> list[float]:
    """Mean fused weight of each view over the samples that have it."""
    return [float(w[vmask[:, v] > 0, v].mean()) for v in range(w.shape[1])]


def run(method: str, views, y, split, p: dict, seed: int, log=print) -> dict:
    test, val, vmask = split["test"], split["val"], split["view_mask"]
    obs = torch.from_numpy(split["label_mask"])
    s_global = M.label_graph(torch.from_numpy(split["y_train"]), obs)
    result = {"method": method, "n_train": len(split["train"]), "view_missing_frac": float(1 - vmask.mean())}
    if method == "br_logreg":
        predict = models.br_logreg(views, vmask, split, **p["br_logreg"])
        fused, probs, w = predict(test)
        _, val_probs, _ = predict(val)
        quality = np.zeros(len(views))
        result |= {"epochs_run": 0, "codebook_usage": float("nan"), "history": []}
    else:
        net = models.build(method, [v.shape[1] for v in views], y.shape[1], s_global, p["model"], seed)
        fit = models.train(net, views, vmask, split, y, p["train"], seed,
                           progress=lambda e, l, s: log(f"epoch {e}: loss {l:.4f} val score {s:.4f}"))
        fused, probs, w, quality = models.predict(net, views, test, vmask)
        _, val_probs, _, _ = models.predict(net, views, val, vmask)
        result |= {k: fit[k] for k in ("epochs_run", "codebook_usage", "history", "best_val_score")}
        if method in models.SCSD_VARIANTS:  # the label graphs behind the weights, for the heatmap figure
            m = torch.from_numpy(vmask[test])
            result["S"] = s_global.numpy()
            result["S_v"] = [M.label_graph(torch.from_numpy(pv[vmask[test, v] > 0])).numpy() for v, pv in enumerate(probs)]
            q = torch.from_numpy(quality)
            result["weights_by_tau"] = {str(t): mean_weights(M.view_weights(q, m, t).numpy(), vmask[test]) for t in p["tau_sensitivity"]}
    result |= {"test": M.multilabel_metrics(y[test], fused), "view_val_ap": per_view_ap(y, val_probs, vmask, val),
               "view_weights": mean_weights(w, vmask[test]), "view_quality": [float(q) for q in quality]}
    return result


def main(argv=None):
    step = Step("scsd", "train", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--dataset", required=True, help="the cell's data set (its methods come from the plan)")
    step.parser.add_argument("--missing-view", type=float, required=True, help="r_V of this cell")
    step.parser.add_argument("--seed", type=int, required=True, help="fold and seed")
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    scsd = step.subtree("scsd")
    cell_methods = plan.cell_methods(scsd["plan"], scsd["datasets"], args.dataset, args.missing_view, args.seed)
    views, y, names = load(args.data)
    views, split = fold_data(views, y, p, args.missing_view, args.seed)
    results, metrics, curves = [], {}, {}
    for method in cell_methods:
        seed_everything(args.seed)  # every method starts from the state it would have in a job of its own
        step.log(f"--- {method}")
        result = run(method, views, y, split, p, args.seed, step.log)
        results.append(result)
        metrics |= {f"{method}/{k}": v for k, v in
                    (result["test"] | {"epochs_run": result["epochs_run"], "codebook_usage": result["codebook_usage"]}).items()}
        curves |= {f"{method}/val_score": [(e, s) for e, _, s in result["history"]],
                   f"{method}/train_loss": [(e, l) for e, l, _ in result["history"]]}
    write_json(args.out, {"view_names": names, "missing_view": args.missing_view, "seed": args.seed, "runs": results})
    step.finish(metrics=metrics, curves={k: v for k, v in curves.items() if v}, outputs=[args.out])


if __name__ == "__main__":
    main()
