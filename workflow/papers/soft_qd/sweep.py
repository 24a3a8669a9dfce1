"""Claim C3 (the paper's sigma ablation): SQUAD on one LP task at a fixed m for each kernel width sigma^2, for every
seed of the sweep (one job: each run is seconds); per seed and sigma^2 the final population's mean fitness, Vendi
score and QD score on the evaluation archive.

The same job runs the claim's negative control (variant "fixed"): every sigma^2 label gets a run with the SAME kernel
width (control_sigma2), each from its own seed (1000 x (label index + 1) + seed, so that the runs differ as runs with
different sigma^2 would, by their random start and batches, but not by sigma^2). A trend of the metrics over the
labels is then noise, which the claim's checks must reject."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

from . import methods, scores
from .plan import per_m

READS = ("soft_qd.sweep", "soft_qd.squad")


def one_run(p: dict, sigma2: float, seed: int, centroids) -> dict:
    r = methods.squad(p["benchmark"], D=p["D"], m=p["m"], N=p["N"], epochs=p["epochs"], sigma2=sigma2,
                      lr=per_m(p["lr"], p["m"]), batch_size=p["batch_size"], K=p["K"], seed=seed)
    f, b = methods.evaluate_np(p["benchmark"], r["x"], p["m"])
    qd = scores.qd_score_cvt(f, b, centroids)
    return {"mean_f": f.mean(), "vendi": scores.vendi_score(b), "qd_score": qd["qd_score"],
            "coverage": qd["coverage"], "n_evals": r["n_evals"]}


def control_seed(seed: int, label_index: int) -> int:
    """The control's seed for one sigma^2 label: distinct per label and from every seed of the reported runs."""
    return 1000 * (label_index + 1) + seed


def sweep(p: dict, seed: int, centroids, log=print) -> pd.DataFrame:
    """Rows: variant 'sigma' (the ablation: kernel width = the label, one seed) and 'fixed' (the control)."""
    rows = []
    for i, s2 in enumerate(p["sigma2s"]):
        for variant, kernel, run_seed in (("sigma", s2, seed), ("fixed", p["control_sigma2"], control_seed(seed, i))):
            row = {"variant": variant, "seed": seed, "sigma2": s2, "kernel_sigma2": kernel, "run_seed": run_seed,
                   **one_run(p, kernel, run_seed, centroids)}
            rows.append(row)
            log(f"{variant} sigma2={s2} (kernel {kernel}, seed {run_seed}): mean f {row['mean_f']:.2f}, "
                f"Vendi {row['vendi']:.2f}, QD {row['qd_score']:.0f}")
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("soft_qd", "sweep", __doc__)
    step.parser.add_argument("--centroids", type=Path, required=True, help="evaluation archive of the sweep's m (.npz)")
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per seed, variant and sigma^2")
    args, p = step.start(argv)
    centroids = read_npz(args.centroids)["centroids"]
    table = pd.concat([sweep(p, seed, centroids, log=step.log) for seed in p["seeds"]], ignore_index=True)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    rho = {(v, s): scores.spearman_vs_sigma2(g) for (v, s), g in table.groupby(["variant", "seed"])}
    metrics = {f"spearman_{k}_{v}_s{s}": r[c] for (v, s), r in rho.items() for k, c in (("fitness", "mean_f"), ("vendi", "vendi"))}
    step.finish(metrics=metrics, outputs=[args.out])


if __name__ == "__main__":
    main()
