"""Collect every (mode, regulariser, seed) run and the toy into tables, measure each claim's metric per unit (a
training seed; a noise seed for the toy's denoising; the toy's one deterministic solve for the closed forms), for
the method and for its negative controls and A/A nulls, and judge claims.yaml. The runs are found through the paper's
plan."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import plan

READS = ("mppd_tv.plan", "mppd_tv.eval")

CLAIMS = Path(__file__).with_name("claims.yaml")
# Negative controls (claims.yaml `controls:`): the run each one stands in for. The toy's control swaps noise kinds.
CONTROLS = {"detached_regulariser": {"tv_l1": "tv_l1_detached"},
            "placebo_mppd_pairing": {"tv_l1": "tv_l1_shuffled"}}  # K2/K3's placebo: TV-l1 on mismatched pairs
TOY_CONTROL = "no_impulses"
# A/A null -> {claim metric: the regulariser whose run of another seed stands in for tv_l1's when it is measured}
AA = {"aa_tv_l2_plain": {f"{k}_l1_minus_{c}": reg for k in ("k2_gn", "k3_at") for c, reg in (("l2", "tv_l2"), ("plain", "plain"))}}


def runs_table(paths: list[str]) -> pd.DataFrame:
    return pd.DataFrame([read_json(p) for p in paths])


def by_seed(table: pd.DataFrame, mode: str, reg: str, column: str) -> pd.Series:
    sel = table[table["mode"].eq(mode) & table.reg.eq(reg)]
    return sel.set_index("seed")[column]


def measure_runs(table: pd.DataFrame, pgd_eps: float) -> dict[str, list[float]]:
    """{claim metric: [value per training seed]}: differences between regularisers trained on the same seed."""
    out: dict[str, list[float]] = {}

    def diff(key, mode, a, b, column):
        if {a, b} <= set(table[table["mode"].eq(mode)].reg):
            d = (by_seed(table, mode, a, column) - by_seed(table, mode, b, column)).dropna()
            if len(d):
                out[key] = d.tolist()

    pgd = f"pgd_{pgd_eps:g}"
    for mode, score in (("gn", "robust_score"), ("at", pgd)):
        k = "k2_gn" if mode == "gn" else "k3_at"
        diff(f"{k}_l1_minus_l2", mode, "tv_l1", "tv_l2", score)
        diff(f"{k}_l1_minus_plain", mode, "tv_l1", "plain", score)
        diff(f"k4_{mode}_clean_l1_minus_l2", mode, "tv_l1", "tv_l2", "clean")
        diff(f"info_{mode}_temporal_minus_l1", mode, "tv_l1_temporal", "tv_l1", score)
        diff(f"info_{mode}_l2_minus_plain", mode, "tv_l2", "plain", score)
    for mode in ("gn", "at"):  # the MPPD the regulariser penalises, relative to plain training's
        if {"tv_l1", "plain"} <= set(table[table["mode"].eq(mode)].reg):
            ratio = (by_seed(table, mode, "tv_l1", "mppd_l1") / by_seed(table, mode, "plain", "mppd_l1")).dropna()
            out[f"s2_{mode}_mppd_l1_ratio_to_plain"] = ratio.tolist()
    return out


def aa_null(table: pd.DataFrame, pgd_eps: float, comparators: dict[str, str]) -> dict[str, list[float]]:
    """An A/A null: each metric measured by `measure_runs` with its comparator's run of another training seed of the
    same mode in tv_l1's place (claims.stand_in, seeds shifted cyclically); a mode with one seed gives no value, and a
    metric with no value is an empty list (judged inconclusive, never a missing metric)."""
    return {metric: measure_runs(claims_mod.stand_in(table, "reg", {"tv_l1": reg}, seed="seed", keys=["mode"]),
                                 pgd_eps).get(metric, []) for metric, reg in comparators.items()}


def measure_toy(toy: dict, noise: str) -> dict[str, list[float]]:
    """The closed-form checks (one deterministic unit) and, per noise seed, ROF's best MSE over TV-l1's."""
    b = pd.DataFrame(toy["bumps"])
    lam, h1 = toy["lam"], b[b.height.eq(1.0)]
    l1, l2 = h1[h1.fidelity.eq("l1")], h1[h1.fidelity.eq("l2")]
    wide, narrow = l1.width * lam > 2.5, l1.width * lam < 1.75  # w >= 10 and w <= 6 at lam = 0.25 (w = 2/lam: tie)
    out = {
        "s1_l1_kept_max_rel_error": [float((l1[wide].recovered - 1.0).abs().max())],
        "s1_l1_removed_max_height": [float(l1[narrow].recovered.abs().max())],
        "s1_rof_max_error_vs_closed_form": [float((l2[l2.width * lam > 2.5].recovered - l2[l2.width * lam > 2.5].closed_form).abs().max())],
        "s1_rof_small_bumps_max_height": [float(l2[l2.width * lam <= 2].recovered.max())],
    }
    tall = b[b.fidelity.eq("l1") & ~np.isclose(b.width * lam, 2)]
    rel = tall.assign(rel=tall.recovered / tall.height).pivot_table(index="width", columns="height", values="rel")
    out["s1_l1_contrast_invariance_max_gap"] = [float(np.ptp(rel.to_numpy(), axis=1).max())] if rel.shape[1] > 1 else []
    d = pd.DataFrame(toy["denoising"])
    d = d[d.noise.eq(noise)]
    out["k1_rof_over_l1_best_mse"] = (d.mse_l2 / d.mse_l1).tolist()
    return out


def main(argv=None):
    step = Step("mppd_tv", "evaluate", __doc__)
    step.parser.add_argument("--toy", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    table = runs_table(plan.run_paths(p))
    toy = read_json(args.toy)
    k3_eps = max(p["score_eps"])  # spec K3: PGD at the larger budget
    step.log(f"{len(table)} runs; toy with {len(toy['bumps'])} bump rows")
    measured = measure_runs(table, k3_eps) | measure_toy(toy, "impulsive")
    controls = {name: measure_runs(claims_mod.stand_in(table, "reg", replace), k3_eps) for name, replace in CONTROLS.items()}
    controls[TOY_CONTROL] = measure_toy(toy, "gaussian")
    controls |= {name: aa_null(table, k3_eps, comparators) for name, comparators in AA.items()}
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    write_text(args.table, table.sort_values(["mode", "reg", "seed"]).to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.claims])


if __name__ == "__main__":
    main()
