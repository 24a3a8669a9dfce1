"""Base classifiers for one (data set, seed): several inits of the MLP on all training rows, one per group on its rows.

Model (spec 4.3): encoder g = MLP(d_in -> 64 -> 64, ReLU), projection h1 = Linear(64 -> 8) + ReLU, head h2 = Linear(8 -> 1),
BCE, Adam. The init with the best VALIDATION accuracy is the vanilla model; z_b is its test confusion vector (the
paper states the frontier on test). The group cap A_c^a z_b^a is the group-a test accuracy of whichever of the vanilla
model and the model trained on group a alone is more accurate on group a of the VALIDATION split. Nothing is selected
on the test set: choosing the init (or the cap's model) by test accuracy would raise the very caps the test points are
then compared against. Writes the frozen representation h1(g(x)) and logits of val/test (what every later step uses)
and a summary.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from workflow.core.io import save_state, write_json, write_npz
from workflow.core.step import Step, seed_everything

from . import data, methods

READS = ("fairness_pareto.datasets.{dataset}", "fairness_pareto.base")


class FairMLP(nn.Module):
    def __init__(self, d_in: int, hidden: int, proj: int):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.h1 = nn.Sequential(nn.Linear(hidden, proj), nn.ReLU())
        self.h2 = nn.Linear(proj, 1)

    def features(self, x):
        return self.h1(self.encoder(x))

    def forward(self, x):
        return self.h2(self.features(x)).squeeze(-1)


def train(X, y, seed: int, hidden: int, proj: int, epochs: int, lr: float, batch_size: int) -> FairMLP:
    """Minibatch Adam on BCE from a seeded init; deterministic with one thread."""
    torch.manual_seed(seed)
    model = FairMLP(X.shape[1], hidden, proj)
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.float32)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for idx in torch.randperm(len(yt), generator=gen).split(batch_size):
            opt.zero_grad()
            loss_fn(model(Xt[idx]), yt[idx]).backward()
            opt.step()
    return model.eval()


@torch.no_grad()
def outputs(model: FairMLP, X) -> tuple[np.ndarray, np.ndarray]:
    """(h1(g(x)), logit) as float64 arrays."""
    H = model.features(torch.as_tensor(X))
    return H.double().numpy(), model.h2(H).squeeze(-1).double().numpy()


def group_acc(y, pred, g, a: int) -> float:
    m = g == a
    return float((y[m] == pred[m]).mean())


def predict(model: FairMLP, X) -> np.ndarray:
    return (outputs(model, X)[1] > 0).astype(int)


def best_on_validation(val_accs) -> int:
    """Index of the vanilla init: the highest validation accuracy, ties to the first (test accuracy is not looked at)."""
    return max(range(len(val_accs)), key=lambda k: (val_accs[k], -k))


def pick_cap(vanilla: dict, group_only: dict) -> tuple[float, str]:
    """The group cap A_c^a z_b^a and its source. Each dict: {"val": group accuracy, "test": group accuracy}.

    The vanilla model is in K by definition (z_b is the frontier's own model), so the cap is at least its test group
    accuracy; the group-only model's test accuracy raises the cap only when that model is the more accurate one on
    the group's VALIDATION rows (ties go to the vanilla model): which model counts is never decided on test."""
    if group_only["val"] > vanilla["val"]:
        return max(vanilla["test"], group_only["test"]), "group_only"
    return vanilla["test"], "vanilla"


def main(argv=None):
    step = Step("fairness_pareto", "train_base", __doc__)
    step.parser.add_argument("--raw", type=Path, nargs="+", required=True, help="catalog files data/raw/<name>.csv")
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--features", type=Path, required=True, help="npz: h1 features, logits, y, group of val/test")
    step.parser.add_argument("--model", type=Path, required=True)
    step.parser.add_argument("--summary", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    texts = {path.stem: path.read_text() for path in args.raw}
    d = data.load(p["source"], p["task"], texts, args.seed, p["val_frac"], p["compas_split"])
    fit = dict(hidden=p["hidden"], proj=p["proj"], epochs=p["epochs"], lr=p["lr"], batch_size=p["batch_size"])
    yva, gva, yte, gte = d["y_val"], d["g_val"], d["y_test"], d["g_test"]
    runs = []  # (validation accuracy, init, model, test accuracy)
    for k in range(p["inits"]):
        model = train(d["X_train"], d["y_train"], seed=1000 * args.seed + k, **fit)
        runs.append((float((predict(model, d["X_val"]) == yva).mean()), k, model,
                     float((predict(model, d["X_test"]) == yte).mean())))
        step.log(f"init {k}: val acc {runs[-1][0]:.4f} test acc {runs[-1][3]:.4f}")
    acc_val, best_k, model, acc_b = runs[best_on_validation([r[0] for r in runs])]
    H_val, logit_val = outputs(model, d["X_val"])
    H_test, logit_test = outputs(model, d["X_test"])
    pred, pred_val = (logit_test > 0).astype(int), (logit_val > 0).astype(int)
    z_b = methods.confusion_vector(yte, pred, gte)
    caps, cap_source, group_only = [], [], []
    for a in (0, 1):
        m = d["g_train"] == a
        ga = train(d["X_train"][m], d["y_train"][m], seed=1000 * args.seed + 100 + a, **fit)
        group_only.append({"val": group_acc(yva, predict(ga, d["X_val"]), gva, a),
                           "test": group_acc(yte, predict(ga, d["X_test"]), gte, a)})
        vanilla = {"val": group_acc(yva, pred_val, gva, a), "test": group_acc(yte, pred, gte, a)}
        cap, source = pick_cap(vanilla, group_only[-1])
        caps.append(cap)
        cap_source.append(source)
    stats = methods.group_stats(yte, gte)
    write_npz(args.features, H_val=H_val, logit_val=logit_val, y_val=d["y_val"], g_val=d["g_val"],
              H_test=H_test, logit_test=logit_test, y_test=yte, g_test=gte)
    save_state(args.model, {k: v.detach().clone() for k, v in model.state_dict().items()},
               {"d_in": int(d["X_train"].shape[1]), "hidden": p["hidden"], "proj": p["proj"]})
    summary = {"dataset_source": p["source"], "task": p["task"], "seed": args.seed, "n_train": len(d["y_train"]),
               "n_val": len(d["y_val"]), "n_test": len(yte), "init_val_acc": [r[0] for r in runs],
               "init_test_acc": [r[3] for r in runs], "best_init": best_k, "acc_b_val": acc_val, "acc_b": acc_b,
               "best_test_acc_of_inits": max(r[3] for r in runs), "z_b": z_b.tolist(),
               "group_acc_vanilla": [group_acc(yte, pred, gte, a) for a in (0, 1)],
               "group_acc_group_only": [r["test"] for r in group_only],
               "group_acc_group_only_val": [r["val"] for r in group_only], "caps": caps, "cap_source": cap_source, **stats,
               "head_w": model.h2.weight.detach().double().numpy().ravel().tolist(), "head_b": float(model.h2.bias)}
    write_json(args.summary, summary)
    step.finish(metrics={"acc_b": acc_b, "cap0": caps[0], "cap1": caps[1], "alpha0": stats["alpha0"],
                         "alpha1": stats["alpha1"], "beta": stats["beta"]},
                outputs=[args.features, args.model, args.summary])


if __name__ == "__main__":
    main()
