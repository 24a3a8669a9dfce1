"""Sparsify and evaluate one (family, seed): every m of the sweep, every method, each scored against its own stream.

Per instance (family, seed, m, order) the planted stream is generated here (cheap), one test family and one
reference (coalesced H, Q_H on the test vectors, exact min cut) are built, and every method of the sweep runs on
the stream and is scored with ``evaluate_sparsifier``. The uniform baseline gets the stream's peak memory as its
budget (equal memory, claim C3) and is repeated over ``uniform_seeds`` reservoir seeds. At ``m_large`` the same
hyperedges also arrive with the bridges last (the order adversarial for online sampling), and the negative
controls run there too: ``uniform-online`` (uniform at online-exact's memory) and ``online-shuffled``
(online-exact's probabilities permuted over the hyperedges).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import methods as M
from .metrics import evaluate_sparsifier, make_test_family, reference_stats
from .instances import ORDERS, make_stream, rng_for

READS = ("hypergraph_sparsify.data", "hypergraph_sparsify.families.{family}", "hypergraph_sparsify.sweep",
         "hypergraph_sparsify.methods", "hypergraph_sparsify.eval")

SCALARS = ("stored", "frac_stored", "bits", "bits_frac", "peak_stored", "peak_bits", "sketch_rows", "sketch_bits",
           "bits_total", "bridges_kept", "time_s", "mean_p", "block", "levels", "max_level", "reductions", "thinned")
# Uniform reservoir baselines: name -> (the method whose memory it gets, which memory). Equal memory: C1, C3.
UNIFORM_BUDGET = {"uniform": ("stream", "peak_stored"), "uniform-online": ("online-exact", "stored")}
# Runs without params.yaml knobs of their own: a control gets exactly the settings of the method it controls.
PARAMS_OF = {"uniform-online": "uniform", "online-shuffled": "online-exact"}
RUN_NAMES = M.METHODS + ("uniform-online",)  # a run's position seeds its random numbers (appended names only)
SCORES = ("eps_hat", "eps_family", "eps_exact", "bisection_err", "min_cut", "min_cut_hat", "min_cut_ratio", "worst_kind")


def method_order(methods: list[str]) -> list[str]:
    """Run order: the uniform baselines last (each gets another method's memory as its budget), otherwise as listed."""
    for name, (source, _) in UNIFORM_BUDGET.items():
        if name in methods and source not in methods:
            raise ValueError(f"the {name} baseline needs '{source}' in the same method list (its budget is {source}'s memory)")
    return [mt for mt in methods if mt not in UNIFORM_BUDGET] + [mt for mt in methods if mt in UNIFORM_BUDGET]


def run_instance(H: dict, p: dict, family: str, seed: int, order: str, methods: list[str], log=print) -> tuple[list, list]:
    """Every method on one stream H, each evaluated on one shared test family. Returns (rows, space-log rows)."""
    m = int(H["verts"].shape[0])
    key = dict(family=family, seed=int(seed), r=int(p["r"]), n=int(p["n"]), m=m, order=order)
    o = ORDERS.index(order)
    fam = make_test_family(H, rng_for(p, family, seed, m, o, 0), n_gauss=p["n_gauss"], n_unions=p["n_unions"],
                             n_eig=p["n_eig"], flip=p["flip"])
    ref = reference_stats(H, fam["X"])
    rows, space = [], []
    memory = {}  # (method, "stored" | "peak_stored") -> hyperedges, the budgets of the uniform baselines
    for method in method_order(methods):
        uniform = method in UNIFORM_BUDGET
        reps = range(p["uniform_seeds"]) if uniform else range(1)
        for rep in reps:
            kw = dict(p[PARAMS_OF.get(method, method)]) | ({"budget": memory[UNIFORM_BUDGET[method]]} if uniform else {})
            rng = rng_for(p, family, seed, m, o, 1 + RUN_NAMES.index(method), rep)
            res = M.run_method("uniform" if uniform else method, H, seed=rng, **kw)
            ev = evaluate_sparsifier(H, res["idx"], res["weight"], fam["X"], seed=rng, ascent_steps=p["ascent_steps"],
                                       ascent_starts=p["ascent_starts"], ref=ref, kind=fam["kind"])
            row = key | {"method": method, "rep": rep, "budget": kw.get("budget", np.nan),
                         "n_bridges": int(np.asarray(H["is_bridge"]).sum())}
            row |= {k: res.get(k, np.nan) for k in SCALARS} | {k: ev.get(k, np.nan) for k in SCORES}
            row["peak_frac"] = res["peak_stored"] / m
            rows.append(row)
            if rep == 0:
                space += [key | {"method": method, "t": int(t), "stored": int(s)} for t, s in zip(res["log_t"], res["log_stored"])]
            memory |= {(method, kind): int(res[kind]) for kind in ("stored", "peak_stored")}
        mine = [r for r in rows if r["method"] == method]
        log(f"{family} s{seed} m={m} {order:12s} {method:13s} stored {np.median([r['stored'] for r in mine]):8.0f} "
            f"peak {mine[0]['peak_frac']:.3f} eps_hat {np.median([r['eps_hat'] for r in mine]):.3f} "
            f"({sum(r['time_s'] for r in mine):.1f}s)")
    return rows, space


def sweep(p: dict, family: str, seed: int, log=print) -> tuple[pd.DataFrame, pd.DataFrame]:
    for key in ("m_small", "m_large"):
        if p[key] not in p["ms"]:
            raise ValueError(f"sweep.{key} = {p[key]} is not one of sweep.ms = {p['ms']}")
    rows, space = [], []
    for m in sorted(p["ms"]):
        big = m == p["m_large"]
        plan = [("random", p["methods"] + (p["control_methods"] if big else []))]
        plan += [("bridges_last", p["bridges_last_methods"] + p["control_methods"])] if big else []
        for order, methods in plan:
            if methods:
                r, s = run_instance(make_stream(p, family, seed, m, order), p, family, seed, order, methods, log)
                rows += r
                space += s
    return pd.DataFrame(rows), pd.DataFrame(space)


def main(argv=None):
    step = Step("hypergraph_sparsify", "sparsify_eval", __doc__)
    step.parser.add_argument("--family", required=True, help="a key of hypergraph_sparsify.families")
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per (m, order, method, reservoir seed)")
    step.parser.add_argument("--space", type=Path, required=True, help=".csv, stored hyperedges every 1k arrivals")
    args, p = step.start(argv)
    table, space = sweep(p, args.family, args.seed, log=step.log)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.space, space.to_csv(index=False))
    head = table[(table.m == p["m_large"]) & (table.order == "random")].groupby("method")
    step.finish(metrics={f"eps_hat.{k}": v for k, v in head.eps_hat.median().items()}
                | {f"peak_frac.{k}": v for k, v in head.peak_frac.median().items()},
                outputs=[args.out, args.space])


if __name__ == "__main__":
    main()
