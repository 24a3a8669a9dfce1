"""Collect every seed's decodes and timings, measure each claim's metric per seed for ReFusion, for its negative
controls (which are also the placebos of K1-K4) and for its A/A nulls, and judge claims.yaml."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import write_text
from workflow.core.step import Step

from . import plan

READS = ("refusion.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
MDM = "mdm/s32"   # one token per step: the MDM of K1, K2 and K5 (spec: the quality setting)
CONTROLS = {      # claims.yaml `controls:`: the decoder each puts in ReFusion's place
    "plan_only": {"refusion": "refusion_plan_only"},
    "one_slot": {"refusion": "refusion_one_slot"},
    "no_cache": {"refusion": "refusion_no_cache"},
}
AA = {            # claims.yaml `nulls: {aa: ...}`: the comparator each puts in the method's place, from another seed
    "aa_mdm": {"refusion": MDM},
    "aa_arm": {"refusion": "arm"},
    "aa_mdm_for_arm": {"arm": MDM},  # K5 compares the ARM with the MDM: the MDM of another seed in the ARM's place
}


def measure(decodes: pd.DataFrame, speed: pd.DataFrame) -> dict[str, list[float]]:
    """{metric: [value per seed]}."""
    out: dict[str, list[float]] = {}

    def add(key, v):
        out.setdefault(key, []).append(float(v))

    for seed, g in decodes.groupby("seed", sort=True):
        acc = g.groupby(["decoder", "task"]).correct.mean()
        mean = g.groupby("decoder").apply(lambda t: t.groupby("task").correct.mean().mean(), include_groups=False)
        totals = g.groupby("decoder")[["generated", "forwards", "queries"]].sum()
        qte = totals.queries / totals.generated
        tpf = totals.generated / totals.forwards
        s = speed[speed.seed.eq(seed)].groupby("decoder")[["generated", "seconds"]].sum(min_count=1)  # NaN: not timed
        tps = s.generated / s.seconds
        add("k0_arm_acc_chain", acc["arm", "chain"])
        add("k0_arm_acc_listop", acc["arm", "listop"])
        add("k1_refusion_minus_1_15_mdm", mean["refusion"] - 1.15 * mean[MDM])
        add("k2_qte_ratio_mdm_over_refusion", qte[MDM] / qte["refusion"])
        add("k2_tps_ratio_refusion_over_mdm", tps["refusion"] / tps[MDM])
        add("k3_refusion_minus_arm", mean["refusion"] - mean["arm"])
        add("k4_tps_ratio_refusion_over_arm", tps["refusion"] / tps["arm"])
        add("k4_tokens_per_forward", tpf["refusion"])
        add("k5_arm_minus_mdm", mean["arm"] - mean[MDM])
        for decoder in mean.index:
            add(f"info_acc_{decoder.replace('/', '_').replace('.', 'p')}", mean[decoder])
        add("info_qte_per_token_refusion", qte["refusion"])
        add("info_qte_per_token_mdm", qte[MDM])
        add("info_tps_refusion", tps["refusion"])
        add("info_tps_arm", tps["arm"])
        add("info_tps_mdm", tps[MDM])
    return out


def with_control(decodes: pd.DataFrame, speed: pd.DataFrame, replace: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The control's rows in ReFusion's place, in both tables (the no-cache control has speed rows only: its tokens and
    counts are ReFusion's own except the queries, which re-feed the prefix; its accuracy rows stay ReFusion's). A
    control that was not timed has no time: ReFusion's seconds become NaN rather than stand for the control's."""
    swap = {k: v for k, v in replace.items() if v in set(decodes.decoder)}
    speed_swap = {k: v for k, v in replace.items() if v in set(speed.decoder)}
    decodes = claims_mod.stand_in(decodes, "decoder", swap) if swap else decodes
    if "refusion_no_cache" in replace.values():  # every call re-feeds the prompt and the committed prefix
        decodes = decodes.copy()
        rows = decodes.decoder.eq("refusion")
        decodes.loc[rows, "queries"] = decodes.loc[rows, "queries_no_cache"]
    if speed_swap:
        return decodes, claims_mod.stand_in(speed, "decoder", speed_swap)
    return decodes, speed.assign(seconds=speed.seconds.where(~speed.decoder.isin(list(replace)), float("nan")))


def aa_nulls(decodes: pd.DataFrame, speed: pd.DataFrame, measured: dict) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls, measured like ReFusion: the comparator's rows of the next seed (cyclically: claims.stand_in with
    seed) in ReFusion's place, in the decodes (per task and problem) and in the timings (per task). With one seed the
    comparator has no independent partner: every value is NaN (inconclusive)."""
    if decodes.seed.nunique() < 2:
        return claims_mod.without_values(measured, AA)
    return {name: measure(claims_mod.stand_in(decodes, "decoder", rep, seed="seed", keys=["task", "problem"]),
                          claims_mod.stand_in(speed, "decoder", rep, seed="seed", keys=["task"]))
            for name, rep in AA.items()}


def main(argv=None):
    step = Step("refusion", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    decodes = pd.concat([pd.read_csv(path) for path in plan.decodes_paths(p)], ignore_index=True)
    speed = pd.concat([pd.read_csv(path) for path in plan.speed_paths(p)], ignore_index=True)
    measured = measure(decodes, speed)
    controls = {name: measure(*with_control(decodes, speed, rep)) for name, rep in CONTROLS.items()}
    controls |= aa_nulls(decodes, speed, measured)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    table = decodes.groupby(["decoder", "task"], as_index=False).agg(
        accuracy=("correct", "mean"), generated=("generated", "sum"), forwards=("forwards", "sum"),
        queries=("queries", "sum"))
    table["qte_per_token"] = table.queries / table.generated
    table["tokens_per_forward"] = table.generated / table.forwards
    timed = speed.groupby(["decoder", "task"], as_index=False)[["generated", "seconds"]].sum()
    table = table.merge(timed.assign(tokens_per_second=timed.generated / timed.seconds)[["decoder", "task", "tokens_per_second"]],
                        on=["decoder", "task"], how="outer")
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.claims])


if __name__ == "__main__":
    main()
