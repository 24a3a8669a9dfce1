"""Score every (regime, seed) run on the held-out scenes, measure each claim's metric per seed for M2, for its
negative controls and for its A/A nulls in M2's place, and judge claims.yaml. ISB_avg and VSI_avg are means over
categories (the paper's averages); an ISB category's accuracy pools its items in all 19 formats. The runs are found
through the plan."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import write_text
from workflow.core.step import Step

from . import qa, records

READS = ("internspatial.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
# Negative controls (claims.yaml `controls:`): the run each one puts in M2's place.
CONTROLS = {"shuffled_spatial": {"m2": "m2_shuffled"}, "wrong_cues": {"m2": "m2_wrongcue"},
            "no_general": {"m2": "m2_nogeneral"}, "placebo_shuffled_general": {"m2": "m2_shuffledgeneral"}}
# A/A nulls (claims.yaml `nulls: {aa: ...}`): the comparator each puts in M2's place, from another seed.
AA = {"aa_m0": {"m2": "m0"}, "aa_m1": {"m2": "m1"}}
UNIT = ["set", "format", "category"]  # what names a unit of the scores table besides its regime and seed
OVERLAY = [f for f in qa.FORMATS if not f.endswith("+raw")]  # spec K3: the box / mask / ID images


def isb_by_format(t: pd.DataFrame, regime: str) -> pd.Series:
    """ISB_avg of one run in each format (mean over categories)."""
    return t[t.set.eq("isb") & t.regime.eq(regime)].groupby("format").accuracy.mean()


def measure_seed(t: pd.DataFrame, prior: pd.DataFrame, chance: pd.DataFrame) -> dict[str, float]:
    """Every claim's metric on one seed's runs (t: that seed's rows of the scores table)."""
    isb = records.category_means(t, "isb").groupby("regime")
    vsi = records.category_means(t, "vsi").groupby("regime")
    isb_avg = {r: g.accuracy.mean() for r, g in isb}
    vsi_avg = {r: g.accuracy.mean() for r, g in vsi}
    general = t[t.set.eq("general")].groupby("regime").accuracy.mean()
    general_chance = chance[chance.set.eq("general")].accuracy.mean()
    f1, f2 = isb_by_format(t, "m1"), isb_by_format(t, "m2")
    m2_cats = isb.get_group("m2").set_index("category").accuracy
    m2_vsi = vsi.get_group("m2").set_index("category").accuracy
    return {
        "k0_m1_over_prior": records.gate(t, prior),
        "k1_isb_gain": isb_avg["m2"] - isb_avg["m0"],
        "k2_vsi_gain": vsi_avg["m2"] - vsi_avg["m0"],
        "k3_std_ratio": f2.std(ddof=0) / f1.std(ddof=0) if f1.std(ddof=0) > 0 else np.nan,  # no spread to narrow
        "k3_overlay_gain": f2[OVERLAY].mean() - f1[OVERLAY].mean(),
        "k3_nl_raw_change": f2["nl+raw"] - f1["nl+raw"],
        "k4_general_change": abs(general["m2"] - general["m0"]),
        "k6_general_over_chance": min(general["m0"], general["m2"]) - general_chance,
        "k5_rotation_below_others": m2_cats.drop("rotation").min() - m2_cats["rotation"],
        "k5_rotation_angle": m2_vsi["rotation_angle"],
        "info_isb_m0": isb_avg["m0"], "info_isb_m1": isb_avg["m1"], "info_isb_m2": isb_avg["m2"],
        "info_vsi_m2": vsi_avg["m2"], "info_general_m0": general["m0"], "info_general_m2": general["m2"],
    }


def measure(table: pd.DataFrame) -> dict[str, list[float]]:
    prior, chance = table[table.regime.eq("prior")], table[table.regime.eq("chance")]
    out: dict[str, list[float]] = {}
    for _, t in table[table.seed.ge(0)].groupby("seed"):
        for name, value in measure_seed(t, prior, chance).items():
            out.setdefault(name, []).append(float(value))
    return out


def aa_nulls(table: pd.DataFrame, measured: dict) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls, measured like M2: the comparator's scores of the next seed (cyclically: claims.stand_in with
    seed) in M2's place, per set, format and category (the priors stay as they are). With one seed the comparator has
    no independent partner: every value is NaN (inconclusive)."""
    if table[table.seed.ge(0)].seed.nunique() < 2:
        return claims_mod.without_values(measured, AA)
    return {name: measure(claims_mod.stand_in(table, "regime", rep, seed="seed", keys=UNIT))
            for name, rep in AA.items()}


def main(argv=None):
    step = Step("internspatial", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    table = records.scores_table(p)
    step.log(f"{table.regime.nunique() - 1} regimes, {table.seed.nunique() - 1} seeds, {len(table)} score rows")
    measured = measure(table)
    controls = {name: measure(claims_mod.stand_in(table, "regime", replace)) for name, replace in CONTROLS.items()}
    controls |= aa_nulls(table, measured)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    val = records.scores_table(p, "val")  # the gate on the validation scenes, as the pilots measured it
    val_gate = [records.gate(t, val[val.regime.eq("prior")]) for _, t in val[val.seed.ge(0)].groupby("seed")]
    step.log("K0's metric on the validation scenes per seed: " + ", ".join(f"{v:+.3f}" for v in val_gate))
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result) | {k: float(np.mean(v)) for k, v in measured.items()}
                | {"val_k0_m1_over_prior": float(np.mean(val_gate))},
                artifacts=[args.table, args.claims], outputs=[args.table, args.claims])


if __name__ == "__main__":
    main()
