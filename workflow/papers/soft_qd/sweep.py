"""Claim C3 (the paper's sigma ablation): SQUAD on one LP task at a fixed m for each kernel width sigma^2, one seed
per job; per sigma^2 the final population's mean fitness, Vendi score and QD score on the evaluation archive."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

from . import methods


def sweep(p: dict, seed: int, centroids, log=print) -> pd.DataFrame:
    rows = []
    for s2 in p["sigma2s"]:
        r = methods.squad(p["benchmark"], D=p["D"], m=p["m"], N=p["N"], epochs=p["epochs"], sigma2=s2, lr=p["lr"],
                          batch_size=p["batch_size"], K=p["K"], seed=seed)
        f, b = methods.evaluate_np(p["benchmark"], r["x"], p["m"])
        qd = methods.qd_score_cvt(f, b, centroids)
        rows.append({"seed": seed, "sigma2": s2, "mean_f": f.mean(), "vendi": methods.vendi_score(b),
                     "qd_score": qd["qd_score"], "coverage": qd["coverage"], "n_evals": r["n_evals"]})
        log(f"sigma2={s2}: mean f {rows[-1]['mean_f']:.2f}, Vendi {rows[-1]['vendi']:.2f}, QD {qd['qd_score']:.0f}")
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("soft_qd", "sweep", __doc__)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--centroids", type=Path, required=True, help="evaluation archive of the sweep's m (.npz)")
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per sigma^2")
    args, p = step.start(argv)
    table = sweep(p, args.seed, read_npz(args.centroids)["centroids"], log=step.log)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    rho = table[["sigma2", "mean_f", "vendi"]].corr(method="spearman")
    step.finish(metrics={"spearman_fitness": rho.loc["sigma2", "mean_f"], "spearman_vendi": rho.loc["sigma2", "vendi"]},
                outputs=[args.out])


if __name__ == "__main__":
    main()
