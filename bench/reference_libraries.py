"""Benchmark: our implementations beside a reference library of the field, on the same inputs (prints figures).

    python bench/reference_libraries.py [--repeat 3]

* hypergraph_sparsify - the paper's min-cut use: networkx's Stoer-Wagner on the whole stream, against our online
  sparsifier followed by the same Stoer-Wagner on the few hyperedges it keeps (time, hyperedges kept, cut value).
  At n = 40 the clique expansion is tiny, so the full computation is faster: the sparsifier buys memory, not time.
* neuromanifolds - the exact rank of a Jacobian: our rank mod p (a certified lower bound) against sympy's exact
  rational rank of the same matrix (time and agreement).
* lnsp - L*_nsp against aalpy's classic L* (queries and time), when the paper's code is present.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def bench_hypergraph(repeat: int) -> None:
    from workflow.papers.hypergraph_sparsify import methods as hs

    print("hypergraph_sparsify: global min cut of a rank-3 stream (n = 40)")
    print(f"  {'m':>6s} {'networkx full s':>16s} {'ours: sparsify + networkx s':>28s} {'kept':>6s} {'cut full':>9s} {'cut ours':>9s}")
    for m in (4000, 16000, 32000):
        H = hs.planted_hypergraph_stream(n=40, m=m, r=3, seed=0)
        full_s, full_cut = timed(lambda: hs.min_cut_value(H["verts"], H["weights"], H["n"]), repeat)

        def ours():
            res = hs.run_method("online-exact", H, seed=0, rho=20)  # params.yaml default
            return res, hs.min_cut_value(H["verts"][res["idx"]], res["weight"], H["n"])

        ours_s, (res, cut) = timed(ours, repeat)
        print(f"  {m:6d} {full_s:16.3f} {ours_s:28.3f} {len(res['idx']):6d} {full_cut:9.3f} {cut:9.3f}")


def bench_neuromanifolds(repeat: int) -> None:
    import sympy

    from workflow.papers.neuromanifolds import nets
    from workflow.papers.neuromanifolds import methods as nm

    print("neuromanifolds: exact rank of the Jacobian of phi at a random point")
    print(f"  {'architecture':>14s} {'r':>2s} {'size':>8s} {'ours mod p s':>13s} {'sympy Q s':>10s} {'rank ours':>10s} {'rank sympy':>11s}")
    # sympy's rational rank grows fast: (3, 3, 1) (a 36 x 12 Jacobian) took 207 s here, against 0.002 s mod p
    for widths, r in (([2, 2, 1], 3), ([2, 2, 1], 5), ([2, 3, 1], 3)):
        rng = np.random.default_rng(0)
        arch = nm.make_arch({"kind": "mlp", "widths": widths})
        c = nm.activation_coeffs(r, "generic", rng)
        X = nm.sample_inputs(3 * arch.n_params, widths[0], rng)
        theta = nm.init_params(arch, rng)
        ours_s, ours_rank = timed(lambda: nets.rank_mod_p(nets.jacobian_mod_p(arch, theta, X, c)), repeat)
        J = nets.jacobian_rational(arch, theta, X, c)
        sym_s, sym_rank = timed(lambda: sympy.Matrix(J.tolist()).rank(), 1)
        print(f"  {str(tuple(widths)):>14s} {r:2d} {str(J.shape):>8s} {ours_s:13.3f} {sym_s:10.3f} {ours_rank:10d} {sym_rank:11d}")


def bench_lnsp(repeat: int) -> None:
    try:
        from workflow.papers.lnsp import methods as ln  # noqa: F401
    except ImportError:
        print("lnsp: not integrated yet (no workflow/papers/lnsp/methods.py)")
        return
    if not hasattr(ln, "compare_with_aalpy"):
        print("lnsp: methods present, comparison helper not available")
        return
    print("lnsp: L*_nsp vs aalpy L* (exact teachers)")
    for row in ln.compare_with_aalpy():
        print("  " + "  ".join(f"{k}={v}" for k, v in row.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for bench in (bench_hypergraph, bench_neuromanifolds, bench_lnsp):
        bench(args.repeat)
        print()


if __name__ == "__main__":
    main()
