"""Collect every seed's pruning sweep, measure each claim's metric per unit (a seed, or a seed x budget), for IR and
for its negative control (the inverted IR ranking in IR's place) and its A/A nulls (each claim's comparator of another
seed in IR's place) and placebos (IR with only its credited ingredient made inert, in IR's place), and judge
claims.yaml."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import write_text
from workflow.core.step import Step

from . import plan

READS = ("tp_spikformer.prune", "tp_spikformer.plan")

CLAIMS = Path(__file__).with_name("claims.yaml")
CONTROLS = {"inverted_ranking": {"ir": "ir_inverted"}}  # claims.yaml `controls:`: the criterion each stands in for
# placebo -> (column, {what it stands in for: its rows}, the claim metrics it gives): the credited ingredient inert
PLACEBOS = {"placebo_ir_scores_other_image": ("criterion", {"ir": "ir_other_image"},
                                              ["k1_acc_minus_dense", "k1_sops_ratio_to_dense", "k2_ir_minus_random"]),
            "placebo_skipped_tokens_other_image": ("mode", {"early_stop": "early_stop_other_image"},
                                                   ["k3_early_stop_minus_drop"])}
AA = {"aa_dense": ["k1_acc_minus_dense", "k1_sops_ratio_to_dense"], "aa_random": ["k2_ir_minus_random"],
      "aa_ir_drop": ["k3_early_stop_minus_drop"]}  # A/A null -> the claim metrics it gives (see aa_nulls)


def measure(t: pd.DataFrame, main_budget: str, low_budgets: list[str]) -> dict[str, list[float]]:
    """{metric: [value per unit]}; units are seeds (K0, K1, K3, S1) or seed x budget (K2, info)."""
    out: dict[str, list[float]] = {}

    def add(key, v):
        if v is not None and v == v:
            out.setdefault(key, []).append(float(v))

    for seed, g in t.groupby("seed", sort=True):
        def val(criterion, mode, budget, col="accuracy"):
            sel = g[g.criterion.eq(criterion) & g["mode"].eq(mode) & g.budget.eq(budget)][col]
            return float(sel.iloc[0]) if len(sel) else None

        dense, dense_sops = val("dense", "dense", "dense"), val("dense", "dense", "dense", "sops")
        ir = val("ir", "early_stop", main_budget)
        if ir is not None:
            add("k1_acc_minus_dense", ir - dense)
            add("k1_sops_ratio_to_dense", val("ir", "early_stop", main_budget, "sops") / dense_sops)
            if (drop := val("ir", "drop", main_budget)) is not None:
                add("k3_early_stop_minus_drop", ir - drop)
        for budget in low_budgets:
            a, r = val("ir", "early_stop", budget), val("random", "early_stop", budget)
            if a is not None and r is not None:
                add("k2_ir_minus_random", a - r)
            for other in ("temporal", "spatial", "magnitude"):
                o = val(other, "early_stop", budget)
                if a is not None and o is not None:
                    add(f"info_ir_minus_{other}", a - o)
        add("k0_dense_accuracy", dense)  # the prerequisite: the dense base on the test images
        add("s1_state_unchanged", g.state_unchanged.min())
        add("info_dense_accuracy", dense)
    return out


def aa_nulls(t: pd.DataFrame, main_budget: str, low_budgets: list[str]) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls, measured by `measure` with each claim's comparator of another seed (another base model; seeds
    shifted cyclically by claims.stand_in within each (mode, budget) or (criterion, budget)) in IR's place: K1's, the
    dense model (its accuracy and SOPs, put where IR with early stopping at the main budget is read); K2's, random
    selection; K3's, IR with the unselected tokens dropped in place of IR with early stopping. A seed without an
    independent partner gives no value; a metric with no value is an empty list (judged inconclusive, not missing)."""
    dense = t[t.criterion.eq("dense")].assign(criterion="dense_as_ir", mode="early_stop", budget=main_budget)
    swapped = {"aa_dense": claims_mod.stand_in(pd.concat([t, dense], ignore_index=True), "criterion",
                                               {"ir": "dense_as_ir"}, seed="seed", keys=["mode", "budget"]),
               "aa_random": claims_mod.stand_in(t, "criterion", {"ir": "random"}, seed="seed", keys=["mode", "budget"]),
               "aa_ir_drop": claims_mod.stand_in(t, "mode", {"early_stop": "drop"}, seed="seed",
                                                 keys=["criterion", "budget"])}
    out = {}
    for name, table in swapped.items():
        m = measure(table, main_budget, low_budgets)
        out[name] = {metric: m.get(metric, []) for metric in AA[name]}
    return out


def placebos(t: pd.DataFrame, main_budget: str, low_budgets: list[str]) -> dict[str, dict[str, list[float]]]:
    """The placebos, measured by `measure` with the placebo's rows (same seed, same frozen model, same budgets) in the
    method's place: K1's and K2's, IR's score map of another image (the IR criterion made inert) in place of IR; K3's,
    early stopping whose skipped tokens carry another image's state (the information early stopping keeps made
    inert) in place of early stopping (rows of IR only: the other criteria have no such mode)."""
    out = {}
    for name, (column, replace, metrics) in PLACEBOS.items():
        m = measure(claims_mod.stand_in(t, column, replace), main_budget, low_budgets)
        out[name] = {metric: m.get(metric, []) for metric in metrics}
    return out


def main(argv=None):
    step = Step("tp_spikformer", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    table = pd.concat([pd.read_csv(path) for path in plan.sweep_paths(p)], ignore_index=True)
    low = [b for b in p["sweep"] if b in p["low_budgets"]]
    measured = measure(table, p["main_budget"], low)
    controls = {name: measure(claims_mod.stand_in(table, "criterion", rep), p["main_budget"], low) for name, rep in CONTROLS.items()}
    controls |= aa_nulls(table, p["main_budget"], low)
    controls |= placebos(table, p["main_budget"], low)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.claims])


if __name__ == "__main__":
    main()
