"""Benchmark: SQUAD (ours, torch) beside ribs' CMA-MAE, CMA-MAEGA and MAP-Elites at the same number of evaluations
(prints a table).

    python bench/soft_qd_vs_ribs.py [--benchmarks rastrigin sphere] [--ms 4 16] [--seed 0] [--profile default]

Sizes and method knobs come from params.yaml (the chosen profile's `soft_qd` section), so the table matches what the
pipeline runs: the evaluation budget is SQUAD's N x (epochs + 1); the ribs baselines run whole rounds of
15 emitters x 36 until they reach it (CMA-MAEGA: per emitter 1 solution point with gradients + 35 samples). QD score
is measured on the paper's fixed 512-cell CVT evaluation archive (ribs CVTArchive, seed 232323) from the final
solutions (SQUAD's population, the baselines' result-archive elites).
Seconds are wall time of the optimisation alone (one thread), not of the evaluation.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    import torch

    from workflow.core.params import load
    from workflow.papers.soft_qd import methods, run

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", nargs="+", default=["rastrigin"], choices=sorted(methods.BENCHMARKS))
    parser.add_argument("--ms", nargs="+", type=int, default=[4, 16], help="behaviour dimensions")
    parser.add_argument("--methods", nargs="+", default=list(run.METHODS), choices=run.METHODS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default="default", help="params profile for sizes and knobs")
    args = parser.parse_args()
    sq = load(args.profile)["soft_qd"]
    ev = sq["evaluation"]
    print(f"soft_qd: SQUAD vs ribs baselines at equal evaluations (profile {args.profile}, seed {args.seed}, "
          f"N = {sq['budget']['N']}, epochs = {sq['budget']['epochs']})")
    print(f"  {'method':>11s} {'benchmark':>10s} {'m':>3s} {'D':>5s} {'evaluations':>12s} {'QD score':>10s} "
          f"{'coverage':>9s} {'Vendi':>7s} {'seconds':>8s}")
    for bench in args.benchmarks:
        D = sq["benchmarks"][bench]["D"]
        for m in args.ms:
            cents = methods.ribs_cvt_centroids(m, ev["cells"], ev["samples"], ev["archive_seed"])
            for method in args.methods:
                knobs = sq["squad"] if method.startswith("squad") else {**sq["ribs"], **sq[method]}
                p = {**sq["budget"], "D": D, **knobs}
                t0 = time.perf_counter()
                r = run.run(method, bench, m, args.seed, p)
                seconds = time.perf_counter() - t0
                f, b = methods.evaluate_np(bench, r["x"], m)
                qd = methods.qd_score_cvt(f, b, cents)
                print(f"  {method:>11s} {bench:>10s} {m:3d} {D:5d} {r['n_evals']:12,d} {qd['qd_score']:10.0f} "
                      f"{qd['coverage']:9.3f} {methods.vendi_score(b):7.2f} {seconds:8.2f}", flush=True)


if __name__ == "__main__":
    main()
