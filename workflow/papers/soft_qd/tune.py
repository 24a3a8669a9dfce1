"""Re-tuning at this run's evaluation budget: one method's knob grid at one behaviour dimension m of LP-Rastrigin,
on a tuning seed that no reported run uses. Every configuration is scored by its QD score on the fixed evaluation
archive, the paper's selection rule (scripts/_rastrigin_find_best_hparam.py keeps the configuration with the best
QD score). The winners are chosen by tune_winners.py and copied into params.yaml by hand (see PAPER.md)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd

from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

from . import methods, plan, scores

READS = ("soft_qd.tuning", "soft_qd.budget", "soft_qd.benchmarks.rastrigin.D",
         "soft_qd.ribs.cells", "soft_qd.ribs.n_emitters", "soft_qd.ribs.batch_per_emitter",
         "soft_qd.squad.batch_size", "soft_qd.squad.K")

BENCHMARK = "rastrigin"  # the paper tunes on its Rastrigin tasks and reuses the values elsewhere


def configs(grid: dict) -> list[dict]:
    """Every combination of a {knob: [values]} grid, in a fixed order."""
    names = sorted(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def tune(method: str, m: int, seed: int, p: dict, grid: dict, centroids, log=print) -> pd.DataFrame:
    """One row per configuration: its knobs, QD score, coverage, Vendi and mean fitness on the evaluation archive."""
    rows = []
    for cfg in configs(grid):
        r = methods.run_method(method, BENCHMARK, m, seed, {**p, **cfg})
        f, b = methods.evaluate_np(BENCHMARK, r["x"], m)
        qd = scores.qd_score_cvt(f, b, centroids)
        rows.append({"method": method, "m": m, "seed": seed, **cfg, "qd_score": qd["qd_score"],
                     "coverage": qd["coverage"], "vendi": scores.vendi_score(b), "mean_f": f.mean(),
                     "n_evals": r["n_evals"]})
        log(f"{method} m={m} {cfg}: QD {qd['qd_score']:.0f}, coverage {qd['coverage']:.3f}")
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("soft_qd", "tune", __doc__)
    step.parser.add_argument("--method", choices=[m for m in plan.METHODS if m not in (plan.CONTROL, plan.PLACEBO)], required=True)
    step.parser.add_argument("--m", type=int, required=True, help="behaviour-space dimension")
    step.parser.add_argument("--centroids", type=Path, required=True, help="evaluation archive of this m (.npz)")
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per configuration")
    args, p = step.start(argv)
    table = tune(args.method, args.m, p["seed"], p, p["grid"][args.method], read_npz(args.centroids)["centroids"],
                 log=step.log)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    best = table.loc[table.qd_score.idxmax()]
    step.finish(metrics={"best_qd_score": best.qd_score, "configs": len(table)}, outputs=[args.out])


if __name__ == "__main__":
    main()
