"""Collect every (family, seed) job into tidy tables, measure each claim's metric per instance for the methods and
for their negative controls, and judge claims.yaml. The jobs' files are found through the paper's plan."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import write_text
from workflow.core.step import Step

from . import plan

READS = ("hypergraph_sparsify",)

CLAIMS = Path(__file__).with_name("claims.yaml")
# Negative controls (claims.yaml `controls:`): the method rows each one replaces, and by which run. The control's
# metrics come from the same ``measure`` on the table with the control in the method's place.
CONTROLS = {
    "uniform_equal_memory": {"online-exact": "uniform-online", "stream": "uniform"},
    "offline_sampler": {"online-exact": "offline-is"},
    "no_pre_thinning": {"stream": "mr-only"},
    # C3 reads stream only; C1 and C1g (its placebo) read online-exact and stream: online-shuffled stands in for both
    "shuffled_importance": {"online-exact": "online-shuffled", "stream": "online-shuffled"},
}
SLIDING_CONTROL = "uniform_equal_memory"  # the sliding-window queries also score a uniform sample of equal size
# A/A nulls (claims.yaml `nulls:`): (column, {method: comparator}) - the comparator's rows of the next seed of the
# same family in the method's place (claims.stand_in). For C2 the comparison is between stream lengths, so its
# comparator is the m_small run ("m_small" stands for that value, "m_large" for the method's m).
NULLS = {"aa_uniform": ("method", {"stream": "uniform"}),
         "aa_online_exact": ("method", {"stream": "online-exact"}),
         "aa_m_small": ("m", {"m_large": "m_small"})}


def concat(paths: list[str]) -> pd.DataFrame:
    return pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)


def measure(table: pd.DataFrame, sliding: pd.DataFrame, m_small: int, m_large: int) -> dict[str, list[float]]:
    """{claim metric: [value per instance]}; units are (family, seed) (C3: per order). A value that was not
    measured (method or m absent, NaN) is left out, so the claim falls short of its units (inconclusive); a metric
    measured on no instance at all is missing, which the claims engine reports as an error.

    ``table``: one row per (family, seed, r, m, order, method, rep) as written by sparsify_eval; ``sliding``: one
    row per (family, seed, r, query time T). Uniform-baseline rows (several reservoir seeds) enter by their median.
    """
    out: dict[str, list[float]] = {}

    def add(key, v):
        if v is not None and not np.isnan(v):
            out.setdefault(key, []).append(float(v))

    for (family, seed), g in table.groupby(["family", "seed"], sort=True):
        r = int(g.r.iloc[0])

        def val(method, col, m=m_large, order="random"):
            sel = g.loc[(g.method == method) & (g.m == m) & (g.order == order), col]
            return float(sel.median()) if len(sel) else np.nan

        def ratio(method, col):
            return val(method, col, m_large) / val(method, col, m_small)

        if r >= 3:
            add("c1_eps_hat_online_exact", val("online-exact", "eps_hat"))
            add("c1_frac_online_exact", val("online-exact", "frac_stored"))
            add("c1_eps_hat_stream", val("stream", "eps_hat"))
            add("c1_peak_frac_stream", val("stream", "peak_frac"))
            add("info_eps_hat_online_sketch", val("online-sketch", "eps_hat"))
            add("info_frac_online_sketch", val("online-sketch", "frac_stored"))
            add("info_eps_hat_mr_only", val("mr-only", "eps_hat"))
            add("info_peak_frac_mr_only", val("mr-only", "peak_frac"))
            add("info_peak_ratio_mr_only", ratio("mr-only", "peak_stored"))
        if r == 2:
            add("c1g_eps_exact_online_exact", val("online-exact", "eps_exact"))
            add("c1g_eps_exact_stream", val("stream", "eps_exact"))
        add("c2_ratio_store_all", ratio("store-all", "stored"))
        add("c2_ratio_online_exact", ratio("online-exact", "stored"))
        add("c2_peak_ratio_stream", ratio("stream", "peak_stored"))
        add("c2_stream_minus_online_ratio", ratio("stream", "peak_stored") - ratio("online-exact", "stored"))
        for order in ("random", "bridges_last"):
            add(f"c3_uniform_over_stream_{order}", val("uniform", "eps_hat", order=order) / val("stream", "eps_hat", order=order))
        if r <= 3:
            add("c4_mincut_dev_stream", abs(val("stream", "min_cut_ratio") - 1.0))
        add("info_ms_per_arrival_online_exact", 1e3 * val("online-exact", "time_s") / m_large)
        add("info_ms_per_arrival_stream", 1e3 * val("stream", "time_s") / m_large)
        nb = val("stream", "n_bridges", order="bridges_last")
        add("info_bridges_kept_stream", val("stream", "bridges_kept", order="bridges_last") / nb)
        add("info_bridges_kept_uniform", val("uniform", "bridges_kept", order="bridges_last") / nb)
    for (family, seed), g in sliding.groupby(["family", "seed"], sort=True):
        if int(g.r.iloc[0]) >= 3:
            add("c5_sliding_eps_hat_max", g.eps_hat.max())
            add("c5_sliding_stored_frac_max", g.stored_frac_window.max())
    return out


def control_as_method(table: pd.DataFrame, replace: dict[str, str]) -> pd.DataFrame:
    """The table with each method's rows dropped and its control's rows relabelled with the method's name (one control
    may stand in for several methods)."""
    keep = table[~table.method.isin(set(replace) | set(replace.values()))]
    return pd.concat([keep, *[table[table.method == ctrl].assign(method=meth) for meth, ctrl in replace.items()]],
                     ignore_index=True)


def measure_controls(table: pd.DataFrame, sliding: pd.DataFrame, m_small: int, m_large: int) -> dict[str, dict]:
    """{control: {claim metric: [value per instance]}}, each from ``measure`` with the control in the method's place;
    the A/A nulls too (``measure_nulls``)."""
    out = {}
    for name, replace in CONTROLS.items():
        queries = sliding.assign(eps_hat=sliding.eps_hat_uniform) if name == SLIDING_CONTROL else sliding
        out[name] = measure(control_as_method(table, replace), queries, m_small, m_large)
    return out | measure_nulls(table, sliding, m_small, m_large)


def measure_nulls(table: pd.DataFrame, sliding: pd.DataFrame, m_small: int, m_large: int) -> dict[str, dict]:
    """{A/A null: {claim metric: [value per instance]}}: ``measure`` with the comparator of the next seed of the same
    family in the method's place. It keeps every metric the method has; a family with one seed (smoke) has no
    independent partner and gives no value."""
    own, sizes, out = measure(table, sliding, m_small, m_large), {"m_small": m_small, "m_large": m_large}, {}
    for name, (column, replace) in NULLS.items():
        if column == "m":
            replace = {sizes[method]: sizes[comparator] for method, comparator in replace.items()}
        swapped = claims_mod.stand_in(table, column, replace, seed="seed", keys=["family"])
        null = measure(swapped, sliding, m_small, m_large)
        out[name] = {metric: null.get(metric, []) for metric in own}
    return out


def main(argv=None):
    step = Step("hypergraph_sparsify", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--space", type=Path, required=True)
    step.parser.add_argument("--sliding-table", type=Path, required=True)
    step.parser.add_argument("--sliding-trace", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    runs = plan.sweep_tables(p)
    table, sliding = concat(runs), concat(plan.sliding_queries(p))
    step.log(f"{len(table)} sparsifier rows from {len(runs)} jobs, {len(sliding)} sliding queries")
    m_small, m_large = p["sweep"]["m_small"], p["sweep"]["m_large"]
    result = claims_mod.check(CLAIMS, measure(table, sliding, m_small, m_large), args.profile, args.claims,
                              step.log, controls=measure_controls(table, sliding, m_small, m_large))
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.space, concat(plan.space_logs(p)).to_csv(index=False))
    write_text(args.sliding_table, sliding.to_csv(index=False, float_format="%.6g"))
    write_text(args.sliding_trace, concat(plan.sliding_memory(p)).to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.space, args.sliding_table, args.sliding_trace, args.claims])


if __name__ == "__main__":
    main()
