"""Sliding-window sparsifier of one (family, seed): reverse-online sampling over a stream, scored at query times.

The stream is the random-order instance of length ``sliding.m`` (the same hyperedges as the sweep's instance of
that length). At each of ``n_queries`` query times T the stored sample is compared with the true window
[T - W, T) on a test family built for that window (claim C5), and so is its negative control, a uniform sample of
the window of the same size; the stored count is also traced over time (Fig. C).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import methods as M
from .metrics import evaluate_sliding
from .instances import make_stream, rng_for

READS = ("hypergraph_sparsify.data", "hypergraph_sparsify.families.{family}", "hypergraph_sparsify.sliding",
         "hypergraph_sparsify.eval")

SLIDING = 99  # the extra seed part of the sliding runs (the sweep uses 0..len(instances.ORDERS)-1)


def run(p: dict, family: str, seed: int, log=print) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-query table, memory trace) of one sliding-window run."""
    m, W = int(p["m"]), int(p["window"])
    if W > m:
        raise ValueError(f"sliding.window = {W} exceeds sliding.m = {m}")
    H = make_stream(p, family, seed, m)
    rng = rng_for(p, family, seed, m, SLIDING)
    res = M.run_sliding(H, W, rho=p["rho"], seed=rng, n_queries=p["n_queries"], recompute_every=p["recompute_every"])
    log(f"{family} s{seed}: sliding pass over m={m}, W={W} in {res['time_s']:.1f}s, peak {res['peak_stored']} stored")
    ev = evaluate_sliding(H, res, seed=rng_for(p, family, seed, m, SLIDING, 1), ascent_steps=p["ascent_steps"],
                            control_seed=rng_for(p, family, seed, m, SLIDING, 2),
                            n_gauss=p["n_gauss"], n_unions=p["n_unions"], n_eig=p["n_eig"], flip=p["flip"])
    key = dict(family=family, seed=int(seed), r=int(p["r"]), n=int(p["n"]), m=m, window=W)
    queries = pd.DataFrame([key | {"T": int(T), "stored": int(s), "stored_frac_window": float(f), "eps_hat": float(e),
                                   "eps_family": float(ef), "eps_exact": float(ex), "eps_hat_uniform": float(eu)}
                            for T, s, f, e, ef, ex, eu in zip(ev["query_times"], ev["stored"], ev["stored_frac_window"],
                                                              ev["eps_hat"], ev["eps_family"], ev["eps_exact"],
                                                              ev["eps_hat_uniform"])])
    for q in queries.itertuples():
        log(f"  T={q.T:6d}: stored {q.stored:5d} ({q.stored_frac_window:.3f} W), eps_hat {q.eps_hat:.3f} "
            f"(uniform sample of the same size: {q.eps_hat_uniform:.3f})")
    memory = pd.DataFrame({**key, "t": np.asarray(res["log_t"], dtype=np.int64),
                           "stored": np.asarray(res["log_stored"], dtype=np.int64)})
    memory["stored_frac_window"] = memory.stored / W
    return queries, memory


def main(argv=None):
    step = Step("hypergraph_sparsify", "sliding", __doc__)
    step.parser.add_argument("--family", required=True, help="a key of hypergraph_sparsify.families")
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per query time")
    step.parser.add_argument("--memory", type=Path, required=True, help=".csv, stored hyperedges after each recomputation")
    args, p = step.start(argv)
    queries, memory = run(p, args.family, args.seed, log=step.log)
    write_text(args.out, queries.to_csv(index=False, float_format="%.6g"))
    write_text(args.memory, memory.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics={"eps_hat_max": queries.eps_hat.max(), "stored_frac_max": queries.stored_frac_window.max()},
                curves={"eps_hat": list(zip(queries["T"], queries.eps_hat)),
                        "stored_frac_window": list(zip(memory.t, memory.stored_frac_window))},
                outputs=[args.out, args.memory])


if __name__ == "__main__":
    main()
