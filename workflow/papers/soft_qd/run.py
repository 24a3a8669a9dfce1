"""One optimisation run: a method (SQUAD, ribs' CMA-MAE / CMA-MAEGA / MAP-Elites, or the control SQUAD without its
repulsion) on an LP benchmark with m behaviour dimensions, at the shared evaluation budget E = N x (epochs + 1)
(SQUAD's initial population plus one evaluation, with its gradient, per solution per epoch; a gradient evaluation
counts as one evaluation for every method, as the paper counts them). Writes the final solutions' fitness and
descriptors (SQUAD: the population; archive methods: the elites of the result archive); they are re-evaluated from x
here, as the paper's evaluate.py does."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import methods

BASELINES = ("cma_mae", "cma_maega", "map_elites")
CONTROL = "squad_norep"  # SQUAD with the repulsion term removed (K = 0 neighbours): fitness ascent only
METHODS = ("squad", *BASELINES, CONTROL)


def per_m(value, m: int):
    """A knob given per behaviour dimension ({m4: ..., m16: ...}) or once for all."""
    if not isinstance(value, dict):
        return value
    if f"m{m}" not in value:
        raise ValueError(f"no value for m = {m} in {value}: add 'm{m}: ...' to this knob in params.yaml")
    return value[f"m{m}"]


def budget(p: dict) -> int:
    return int(p["N"]) * (int(p["epochs"]) + 1)


def run(method: str, benchmark: str, m: int, seed: int, p: dict) -> dict:
    """Dispatch to the method with its knobs for this m; returns {x, f, b, n_evals, history?}.

    p holds the budget (N, epochs), D, and the method's knobs (SQUAD: lr, sigma2, batch_size, K; ribs baselines:
    cells, n_emitters, batch_per_emitter and their own)."""
    D, E = int(p["D"]), budget(p)
    if method in ("squad", CONTROL):
        return methods.squad(benchmark, D=D, m=m, N=p["N"], epochs=p["epochs"], sigma2=per_m(p["sigma2"], m),
                             lr=per_m(p["lr"], m), batch_size=p["batch_size"],
                             K=0 if method == CONTROL else p["K"], seed=seed)
    common = dict(budget=E, seed=seed, D=D, m=m, centroids=p["cells"], batch_size=p["batch_per_emitter"],
                  n_emitters=p["n_emitters"])
    if method == "cma_mae":
        return methods.run_cma_mae(benchmark, sigma0=per_m(p["sigma0"], m), learning_rate=per_m(p["archive_lr"], m),
                                   **common)
    if method == "cma_maega":
        return methods.run_cma_maega(benchmark, sigma0=per_m(p["sigma0"], m), lr=per_m(p["lr"], m),
                                     learning_rate=per_m(p["archive_lr"], m), **common)
    if method == "map_elites":
        return methods.run_map_elites(benchmark, iso_sigma=per_m(p["iso_sigma"], m),
                                      line_sigma=per_m(p["line_sigma"], m), **common)
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")


def main(argv=None):
    step = Step("soft_qd", "run", __doc__)
    step.parser.add_argument("--benchmark", choices=sorted(methods.BENCHMARKS), required=True)
    step.parser.add_argument("--method", choices=METHODS, required=True)
    step.parser.add_argument("--m", type=int, required=True, help="behaviour-space dimension")
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True, help=".npz: f, b of the final solutions, n_evals, seconds")
    args, p = step.start(argv)
    t0 = time.perf_counter()
    r = run(args.method, args.benchmark, args.m, args.seed, p)
    seconds = time.perf_counter() - t0
    f, b = methods.evaluate_np(args.benchmark, r["x"], args.m)  # re-evaluate the final solutions (paper's evaluate.py)
    hist = r.get("history", {})
    write_npz(args.out, f=f, b=b, n_evals=np.int64(r["n_evals"]), budget=np.int64(budget(p)), seconds=np.float64(seconds),
              **{f"history_{k}": np.asarray(v) for k, v in hist.items()})
    step.log(f"{args.method} {args.benchmark} m={args.m} seed={args.seed}: {r['n_evals']} evaluations in {seconds:.1f}s, "
             f"{len(f)} solutions, mean f {f.mean():.2f}")
    curves = {k: list(enumerate(v)) for k, v in hist.items()}
    step.finish(metrics={"n_evals": r["n_evals"], "seconds": seconds, "n_solutions": len(f), "mean_f": f.mean(),
                         "max_f": f.max()}, curves=curves, outputs=[args.out])


if __name__ == "__main__":
    main()
