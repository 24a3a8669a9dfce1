"""One run job: every method planned at one benchmark x m x seed (SQUAD, ribs' CMA-MAE / CMA-MAEGA / MAP-Elites, and
the control, SQUAD without its repulsion, where it runs), one after the other, each from the job's seed as if alone,
at the shared evaluation budget E = N x (epochs + 1) (SQUAD's initial population plus one evaluation, with its
gradient, per solution per epoch; a gradient evaluation counts as one evaluation for every method, as the paper counts
them). Writes, per method, the final solutions' fitness and descriptors (SQUAD: the population; archive methods: the
elites of the result archive); they are re-evaluated from x here, as the paper's evaluate.py does."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import methods, plan

READS = ("soft_qd.budget", "soft_qd.benchmarks.{sqd_bench}.D", "soft_qd.squad", "soft_qd.ribs")
# read only to find the methods this job runs (soft_qd.plan.job_methods): the rule stamps that list, not these
PLAN_READS = ("soft_qd.benchmarks", "soft_qd.methods", "soft_qd.seeds",
              "soft_qd.control", "soft_qd.heatmap")

SQUAD_KNOBS = ("lr", "sigma2", "batch_size", "K")  # params soft_qd.squad
RIBS_SHARED = ("cells", "n_emitters", "batch_per_emitter")  # params soft_qd.ribs, beside each baseline's own section


def knobs(method: str, p: dict) -> dict:
    """The flat knobs of one method (methods.run_method) from the job's params: budget, D, the `squad` section and
    the `ribs` section (shared knobs, and one sub-section per baseline). The control and the placebo run with SQUAD's knobs."""
    if method in plan.SQUAD_VARIANTS:
        own = {k: p[k] for k in SQUAD_KNOBS}
    else:
        own = {**{k: p[k] for k in RIBS_SHARED}, **p[method]}
    return {"N": p["N"], "epochs": p["epochs"], "D": p["D"], **own}


def run_one(method: str, benchmark: str, m: int, seed: int, p: dict, log=print) -> dict:
    """One method's run and its re-evaluated final solutions: {f, b, n_evals, seconds, history_*}."""
    t0 = time.perf_counter()
    r = methods.run_method(method, benchmark, m, seed, knobs(method, p))
    seconds = time.perf_counter() - t0
    f, b = methods.evaluate_np(benchmark, r["x"], m)  # re-evaluate the final solutions (paper's evaluate.py)
    log(f"{method} {benchmark} m={m} seed={seed}: {r['n_evals']} evaluations in {seconds:.1f}s, {len(f)} solutions, "
        f"mean f {f.mean():.2f}")
    return {"f": f, "b": b, "n_evals": np.int64(r["n_evals"]), "seconds": np.float64(seconds),
            **{f"history_{k}": np.asarray(v) for k, v in r.get("history", {}).items()}}


def main(argv=None):
    step = Step("soft_qd", "run", __doc__)
    step.parser.add_argument("--benchmark", choices=plan.BENCHMARKS, required=True)
    step.parser.add_argument("--m", type=int, required=True, help="behaviour-space dimension")
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True,
                             help=".npz: per method <method>.f, .b, .n_evals, .seconds, .history_*; methods; budget")
    args, p = step.start(argv)
    names = plan.job_methods(step.subtree("soft_qd"), args.benchmark, args.m, args.seed)  # in the plan's order
    results = {name: run_one(name, args.benchmark, args.m, args.seed, p, log=step.log) for name in names}
    write_npz(args.out, methods=np.array(names), budget=np.int64(plan.budget(p)),
              **{f"{name}.{k}": v for name, r in results.items() for k, v in r.items()})
    metrics = {f"{name}_{k}": v for name, r in results.items()
               for k, v in (("n_evals", r["n_evals"]), ("seconds", r["seconds"]), ("n_solutions", len(r["f"])),
                            ("mean_f", r["f"].mean()), ("max_f", r["f"].max()))}
    curves = {f"{name}_{k.removeprefix('history_')}": list(enumerate(v)) for name, r in results.items()
              for k, v in r.items() if k.startswith("history_")}
    step.finish(metrics=metrics, curves=curves, outputs=[args.out])


if __name__ == "__main__":
    main()
