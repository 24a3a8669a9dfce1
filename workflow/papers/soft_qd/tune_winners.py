"""The winner of every tuning grid (highest QD score on the tuning seed) beside the value params.yaml uses, so that a
re-run of the tuning shows at once whether the reported runs still use the winners."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import plan

READS = ("soft_qd",)

SCORES = {"method", "m", "seed", "qd_score", "coverage", "vendi", "mean_f", "n_evals"}


def knobs_of(params: dict, method: str) -> dict:
    """A method's tuned knobs in the `soft_qd` params: SQUAD's section, or the baseline's sub-section of `ribs`."""
    return params["squad"] if method == "squad" else params["ribs"][method]


def winners(tables: list[pd.DataFrame], params: dict) -> pd.DataFrame:
    """One row per method x m x knob: the winning value, the value in params.yaml, and whether they agree."""
    rows = []
    for t in tables:
        best = t.loc[t.qd_score.idxmax()]
        method, m = best["method"], int(best["m"])
        for knob in sorted(set(t.columns) - SCORES):
            used = plan.per_m(knobs_of(params, method)[knob], m)
            rows.append({"method": method, "m": m, "knob": knob, "winner": best[knob], "params_yaml": used,
                         "agrees": bool(abs(float(best[knob]) - float(used)) < 1e-12),
                         "winner_qd_score": best.qd_score, "configs": len(t)})
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("soft_qd", "tune_winners", __doc__)
    step.parser.add_argument("--out", type=Path, required=True, help="winners (.csv)")
    args, p = step.start(argv)
    table = winners([pd.read_csv(path) for path in plan.tuning_paths(p)], p)  # every grid of the plan
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    for r in table[~table.agrees].itertuples():
        step.log(f"params.yaml differs from the tuning winner: {r.method} m={r.m} {r.knob} = {r.params_yaml} "
                 f"(winner {r.winner})")
    step.finish(metrics={"knobs": len(table), "disagreements": int((~table.agrees).sum())}, outputs=[args.out])


if __name__ == "__main__":
    main()
