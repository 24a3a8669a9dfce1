"""The intervention families on one (data set, seed), one after the other: each is fit on the validation split on top
of the frozen base model, evaluated on test, and each test point is placed against the frontiers (ours, FACT,
FACT+G-STAR) at its own fairness level. Each family starts from the same seeded state, as if it ran alone.

Families (spec 4.3): ``ours`` (last-layer retraining of h2 with group-dependent bias, lambda-sweep, EOd and DP variants;
and its control with one shared bias),
``gstar`` (w = w* fixed, group thresholds; lambda-sweep), ``eqodds`` (fairlearn ThresholdOptimizer on the frozen score:
equalized odds, and demographic parity with a tolerance sweep), ``dfr`` (l1 logistic regression of h1 features on
group-and-class-balanced subsets, C-sweep), ``expgrad`` (fairlearn ExponentiatedGradient, logistic regression on
x_hat = [h1, 1[a=0], 1[a=1]], EqualizedOdds / DemographicParity bound sweep).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import read_json, read_npz, write_text
from workflow.core.step import Step, seed_everything

from . import lp
from . import methods as M

READS = ("fairness_pareto.interventions", "fairness_pareto.frontiers.roc_thresholds")

def frozen_score():
    """A prefit sklearn estimator whose input IS the frozen base logit (column 0), for ThresholdOptimizer."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class FrozenScore(ClassifierMixin, BaseEstimator):
        def __sklearn_is_fitted__(self):
            return True

        def fit(self, X, y=None):
            return self

        def decision_function(self, X):
            return np.asarray(X, float)[:, 0]

    return FrozenScore()


def run_ours(f, s, p, seed):
    """Ours' lambda-sweeps, plus the control of claim C4: the same EOd sweep with one shared bias (``ours_shared_eod``:
    the group-dependent bias, the paper's mechanism, removed; same loss, init, steps and lambdas)."""
    pts = []
    w0, b0 = np.asarray(s["head_w"]), s["head_b"]
    runs = [(f"ours_{notion}", notion, True) for notion in p["ours_notions"]] + [("ours_shared_eod", "eod", False)]
    for name, notion, group_bias in runs:
        for lam in p["lambdas"]:
            head = M.retrain_head_group_bias(f["H_val"], f["y_val"], f["g_val"], lam=lam, notion=notion, w_init=w0,
                                             b_init=b0, tau=p["tau"], epochs=p["epochs"], lr=p["lr"], seed=seed,
                                             group_bias=group_bias)
            pts.append((name, lam, M.predict_group_bias(f["H_test"], f["g_test"], head)))
    return pts


def run_gstar(f, s, p, seed):
    pts = []
    for notion in p["ours_notions"]:
        for lam in p["lambdas"]:
            c = M.gstar_thresholds(f["logit_val"], f["y_val"], f["g_val"], lam=lam, notion=notion,
                                   grid=np.quantile(f["logit_val"], np.linspace(0, 1, p["gstar_grid"])))
            yhat = np.where(f["g_test"] == 0, f["logit_test"] >= c["c0"], f["logit_test"] >= c["c1"]).astype(int)
            pts.append((f"gstar_{notion}", lam, yhat))
    return pts


def run_eqodds(f, s, p, seed):
    from fairlearn.postprocessing import ThresholdOptimizer

    pts = []
    settings = [("eqodds", "equalized_odds", None)] + [("dp_postproc", "demographic_parity", t) for t in p["dp_tols"]]
    for name, constraint, tol in settings:
        to = ThresholdOptimizer(estimator=frozen_score(), constraints=constraint, prefit=True,
                                predict_method="decision_function", tol=tol or None)
        to.fit(f["logit_val"][:, None], f["y_val"], sensitive_features=f["g_val"])
        yhat = to.predict(f["logit_test"][:, None], sensitive_features=f["g_test"], random_state=seed)
        pts.append((name, 0.0 if tol is None else tol, np.asarray(yhat, int)))
    return pts


def run_dfr(f, s, p, seed):
    from sklearn.linear_model import LogisticRegression

    idx = M.dfr_balanced_indices(f["y_val"], f["g_val"], seed=seed)
    pts = []
    for C in p["dfr_Cs"]:
        clf = LogisticRegression(penalty="l1", C=C, solver="liblinear", random_state=seed)
        clf.fit(f["H_val"][idx], f["y_val"][idx])
        pts.append(("dfr", C, clf.predict(f["H_test"]).astype(int)))
    return pts


def run_expgrad(f, s, p, seed):
    from fairlearn.reductions import DemographicParity, EqualizedOdds, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression

    def xhat(H, g):
        return np.c_[H, g == 0, g == 1].astype(float)

    pts = []
    for name, moment in (("expgrad_eod", EqualizedOdds), ("expgrad_dp", DemographicParity)):
        for bound in p["expgrad_bounds"]:
            eg = ExponentiatedGradient(LogisticRegression(max_iter=1000), moment(difference_bound=bound),
                                       max_iter=p["expgrad_iters"])
            eg.fit(xhat(f["H_val"], f["g_val"]), f["y_val"], sensitive_features=f["g_val"])
            pts.append((name, bound, np.asarray(eg.predict(xhat(f["H_test"], f["g_test"]), random_state=seed), int)))
    return pts


RUNNERS = {"ours": run_ours, "gstar": run_gstar, "eqodds": run_eqodds, "dfr": run_dfr, "expgrad": run_expgrad}


def group_blind_caps(f, s) -> tuple:
    """The placebo's group caps (frontiers.py, placebo_group_caps): the model's own group accuracies under the group
    attribute permuted with the cell's seed, exactly as the frontiers step computes them (methods.shuffled_group_cell)."""
    return tuple(M.shuffled_group_cell(f["logit_test"], f["y_test"], f["g_test"], s["seed"])[0]["caps"])


def place(points, f, s, roc, notions=("eod", "dp")) -> pd.DataFrame:
    """Test metrics of each point and the frontiers' accuracy at the point's own fairness level (also the placebo's:
    the MS frontier with group-blind caps, column ``ours_group_blind_caps_at_<notion>``)."""
    a0, a1, b, zb, caps = s["alpha0"], s["alpha1"], s["beta"], np.asarray(s["z_b"]), tuple(s["caps"])
    blind = group_blind_caps(f, s)
    rows = []
    for method, knob, yhat in points:
        m = M.fairness_metrics(f["y_test"], yhat, f["g_test"])
        row = {"method": method, "knob": float(knob), **{k: m[k] for k in ("acc", "dp", "eod", "eop")}}
        for notion in notions:
            e = m[notion]
            row[f"ours_at_{notion}"] = lp.ms_frontier(a0, a1, b, e, notion, z_b=zb, zb_groups=caps)["acc"]
            row[f"fact_at_{notion}"] = lp.fact_frontier(a0, a1, b, e, zb, notion)["acc"]
            row[f"factgstar_at_{notion}"] = lp.fact_gstar_frontier(a0, a1, b, e, roc, notion)["acc"]
            row[f"ours_group_blind_caps_at_{notion}"] = lp.ms_frontier(a0, a1, b, e, notion, z_b=zb, zb_groups=blind)["acc"]
        rows.append(row)
    return pd.DataFrame(rows)


def run_families(families, f, s, p, seed: int, log=print) -> pd.DataFrame:
    """Every family's points, placed against the frontiers, in the order given. Each family starts from the same
    seeded state (``seed_everything``), as when each ran in a job of its own: the points do not depend on the order."""
    roc = M.roc_with_base(f["logit_test"], f["y_test"], f["g_test"], s["z_b"], p["roc_thresholds"])
    tables = []
    for family in families:
        seed_everything(seed)
        table = place(RUNNERS[family](f, s, p, seed), f, s, roc)
        for r in table.itertuples():
            log(f"{r.method} knob={r.knob:g}: acc {r.acc:.4f} eod {r.eod:.4f} dp {r.dp:.4f} (ours@eod {r.ours_at_eod:.4f})")
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def main(argv=None):
    step = Step("fairness_pareto", "interventions", __doc__)
    step.parser.add_argument("--features", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    f, s = read_npz(args.features), read_json(args.base)
    table = run_families(p["families"], f, s, p, args.seed, step.log)
    write_text(args.out, table.to_csv(index=False, float_format="%.8g"))
    step.finish(metrics={"points": len(table), "best_acc": float(table.acc.max()), "min_eod": float(table.eod.min()),
                         "max_excess_over_ours_eod": float((table.acc - table.ours_at_eod).max())},
                outputs=[args.out])


if __name__ == "__main__":
    main()
