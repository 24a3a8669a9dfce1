"""Per-year metrics of every run, the main table (methods x MAE/RMSE/MAPE @3/6/12/avg), each claim's metric per
unit, and claims.json. Units: (seed, year) pairs, paired across methods (same data, same training seed).

The negative controls are judged by the same checks on ``measure`` with the control in STBP's place: its own
trained model with the bank rows shuffled across nodes (``bank_shuffled``), or finetune_all, i.e. STBP's
protocol with nothing frozen (``unfrozen``). The placebo ``placebo_bank`` is the run ``stbp_shuffled_bank`` in
STBP's place: STBP trained and tested through every year with its bank rows dealt to the nodes by a fresh random
permutation in every training batch (only the per-node assignment of the bank made inert). The A/A nulls (``AA``) put
each claim's comparator, from another seed of the same (data set, year), in STBP's place: the same ratio then meets
the comparator's own seed-to-seed noise and nothing else.

The runs' files are found through the paper's plan (``plan.run_paths`` of the ``stbp.plan`` section), the same
function the rule file builds its inputs from: no command line grows with the number of runs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import plan

READS = ("stbp.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
METRIC_COLS = [f"{m}_{h}" for m in ("mae", "rmse", "mape") for h in ("3", "6", "12", "avg")]
NODE_COLS = ["mae_new", "mae_old", "mae_night"]
PLACEBO = "stbp_shuffled_bank"  # the placebo of the bank's claims: the bank rows dealt to the nodes at random in training
SAME_BACKBONE = "finetune_or_retrain"  # K1b's comparator as one method: the better of the two in each unit
# A/A null -> {claim metric: the comparator whose runs of another seed stand in for STBP's when it is measured}
AA = {"aa_trafficstream_eac": {"k1_ratio_vs_trafficstream": "trafficstream_lite", "k1_ratio_vs_eac": "eac_lite"},
      "aa_finetune_retrain": {"k1_ratio_vs_same_backbone": SAME_BACKBONE},
      "aa_retrain": {"k2_time_ratio_vs_retrain": "retrain"},
      "aa_finetune_all": {"k3_ratio_vs_finetune_incremental": "finetune_all"},
      "aa_backbone_only": {"k4_night_ratio_vs_backbone_only": "backbone_only"},
      "aa_trafficstream": {"p1_ratio_vs_trafficstream": "trafficstream_lite"}}


def tidy(runs: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per (dataset, method, seed, year), and one per (dataset, method, seed) for the backward check."""
    rows, back = [], []
    for r in runs:
        for y in r["years"]:
            rows.append({"dataset": r["dataset"], "method": r["method"], "seed": r["seed"], **y})
        back.append({"dataset": r["dataset"], "method": r["method"], "seed": r["seed"], **r["backward"]})
    return pd.DataFrame(rows), pd.DataFrame(back)


def main_table(years: pd.DataFrame) -> pd.DataFrame:
    """The paper's main table: per data set and method, metrics averaged over years, then over seeds."""
    per_seed = years.groupby(["dataset", "method", "seed"])[METRIC_COLS].mean()
    table = per_seed.groupby(["dataset", "method"]).agg(["mean", "std"])
    table.columns = [f"{m}_{s}" if s == "std" else m for m, s in table.columns]
    table["seeds"] = per_seed.groupby(["dataset", "method"]).size()
    return table.reset_index()


def ratio(years: pd.DataFrame, dataset: str, num: str, den, col: str = "mae_avg", incremental: bool = False,
          last: bool = False) -> list[float]:
    """MAE(num) / MAE(den) per (seed, year) present for both; ``den`` may be a list (its per-unit minimum)."""
    d = years[years.dataset == dataset]
    if incremental:
        d = d[d.year > 0]
    if last and len(d):
        d = d[d.year == d.year.max()]
    wide = d.pivot_table(index=["seed", "year"], columns="method", values=col)
    dens = [den] if isinstance(den, str) else list(den)
    if num not in wide or not all(m in wide for m in dens):
        return []
    r = wide[num] / wide[dens].min(axis=1)
    return [float(v) for v in r.dropna()]


def with_shuffled_bank(years: pd.DataFrame, method: str = "stbp") -> pd.DataFrame:
    """The years table with ``method``'s test metrics replaced by those of its bank-shuffled evaluation."""
    out = years.copy()
    rows = out.method == method
    for col in METRIC_COLS + NODE_COLS:
        out.loc[rows, col] = out.loc[rows, f"shuffled_{col}"]
    return out


def in_place_of(years: pd.DataFrame, control: str, method: str = "stbp") -> pd.DataFrame:
    """The years table with ``control``'s rows standing in for ``method``'s."""
    return pd.concat([years[years.method != method], years[years.method == control].assign(method=method)],
                     ignore_index=True)


def with_same_backbone(years: pd.DataFrame) -> pd.DataFrame:
    """The years table plus K1b's comparator as one method (SAME_BACKBONE): in each (data set, seed, year), the row of
    whichever of finetune_all and retrain has the lower MAE, as the check takes their per-unit minimum."""
    d = years[years.method.isin(["finetune_all", "retrain"])].dropna(subset=["mae_avg"])
    best = d.loc[d.groupby(["dataset", "seed", "year"]).mae_avg.idxmin()] if len(d) else d
    return pd.concat([years, best.assign(method=SAME_BACKBONE)], ignore_index=True)


def aa_null(years: pd.DataFrame, back: pd.DataFrame, comparators: dict[str, str]) -> dict[str, list[float]]:
    """An A/A null: each metric measured by ``measure`` with its comparator's rows of another seed of the same
    (data set, year) in STBP's place (``claims.stand_in``); a unit whose comparator ran one seed only gives no value,
    and a metric with no value is an empty list (judged inconclusive, never a missing metric)."""
    table = with_same_backbone(years)
    return {metric: measure(claims_mod.stand_in(table, "method", {"stbp": comparator}, seed="seed",
                                                keys=["dataset", "year"]), back).get(metric, [])
            for metric, comparator in comparators.items()}


def controls_of(years: pd.DataFrame, back: pd.DataFrame) -> dict[str, dict[str, list[float]]]:
    """Each claims.yaml control's metrics (the negative controls and the A/A nulls), measured by the same function
    as STBP's."""
    return {"bank_shuffled": measure(with_shuffled_bank(years), back),
            "unfrozen": measure(in_place_of(years, "finetune_all"), back),
            "placebo_bank": measure(in_place_of(years, PLACEBO), back),
            **{name: aa_null(years, back, comparators) for name, comparators in AA.items()}}


def measure(years: pd.DataFrame, back: pd.DataFrame) -> dict[str, list[float]]:
    m: dict[str, list[float]] = {}

    def put(name, values):
        if len(values):
            m[name] = [float(v) for v in values]

    put("k1_ratio_vs_trafficstream", ratio(years, "stream", "stbp", "trafficstream_lite"))
    put("k1_ratio_vs_eac", ratio(years, "stream", "stbp", "eac_lite"))
    put("k1_ratio_vs_same_backbone", ratio(years, "stream", "stbp", ["finetune_all", "retrain"]))
    inc = years[(years.dataset == "stream") & (years.method == "stbp") & (years.year > 0)]
    put("k2_trainable_minus_3dN", (inc.trainable - 3 * inc.d * inc.n_nodes).abs())
    put("k2_time_ratio_vs_retrain", ratio(years, "stream", "stbp", "retrain", col="cpu_seconds", incremental=True))
    put("k3_ratio_vs_finetune_incremental", ratio(years, "stream", "stbp", "finetune_all", incremental=True))
    put("k4_night_ratio_vs_backbone_only", ratio(years, "stream", "stbp", "backbone_only", col="mae_night", last=True))
    put("k4_night_ratio_vs_static", ratio(years, "stream", "stbp", "static", col="mae_night", last=True))
    put("p1_ratio_vs_trafficstream", ratio(years, "pedestrian", "stbp", "trafficstream_lite"))
    put("a1_no_freq_over_stbp", ratio(years, "stream", "stbp_no_freq", "stbp"))
    put("a1_no_bank_mod_over_stbp", ratio(years, "stream", "stbp_no_bank_mod", "stbp"))
    b = back[back.dataset == "stream"]
    for method in ("stbp", "finetune_all"):
        s = b[b.method == method]
        put(f"b1_{method}_forgetting", s.mae_year0_final / s.mae_year0_initial)
    return m


def main(argv=None):
    step = Step("stbp", "evaluate", __doc__)
    step.parser.add_argument("--years", type=Path, required=True, help="per-year metrics (.csv)")
    step.parser.add_argument("--table", type=Path, required=True, help="main table (.csv)")
    step.parser.add_argument("--backward", type=Path, required=True, help="backward check (.csv)")
    step.parser.add_argument("--claims", type=Path, required=True)
    args, run_plan = step.start(argv)  # the rule reads stbp.plan: which runs exist
    years, back = tidy([read_json(path) for path in plan.run_paths(run_plan)])
    result = claims_mod.check(CLAIMS, measure(years, back), args.profile, args.claims, step.log,
                              controls=controls_of(years, back))
    write_text(args.years, years.to_csv(index=False, float_format="%.6g"))
    write_text(args.table, main_table(years).to_csv(index=False, float_format="%.4f"))
    write_text(args.backward, back.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.years, args.table, args.backward, args.claims])


if __name__ == "__main__":
    main()
