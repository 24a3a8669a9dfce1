"""Every variant's scores of every seed: the accuracy table, each claim's metric per seed for the method, for its
negative controls, for its A/A nulls and for its placebos, and claims.yaml."""
from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import plan

READS = ("code_reasoning.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
STRUCTURAL = ("py_nows", "py_kwrand")
SEMANTIC = ("py_varren", "py_nocomm", "py_commswap")
AA = {  # claims.yaml `nulls: {aa: ...}`: the comparator each puts in the credited variants' place, from another seed
    "aa_nl": {"py": "nl"},
    "aa_py": {v: "py" for v in ("pseudo", "flowchart", "compressed", "fictional", "py_commmislead")},
}

# The placebos (claims.yaml `nulls: {placebo: ...}`): K3's and K4's are runs (the credited rendering of another
# program in its place); K2's and K5's relabel the same runs (seed s draws its labels with rng(PLACEBO_SEED + s)).
MISMATCHED = {"placebo_mismatched_abstractions": {"pseudo": "pseudo_mismatch", "flowchart": "flowchart_mismatch"},
              "placebo_mismatched_compressed": {"compressed": "compressed_mismatch"}}
PLACEBO_SEED = 7000
REGULAR, IRREGULAR = ("fictional", "py_commmislead"), "py_kwrand"


def measure(t: pd.DataFrame) -> dict[str, list[float]]:
    """{metric: [value per seed]} from the table (variant, seed, task, accuracy); `avg` is the mean of math and
    code accuracy (the spec's average for K2, K4, K5)."""
    out: dict[str, list[float]] = {}

    def add(key, v):
        out.setdefault(key, []).append(float(v))

    for _, g in t.groupby("seed", sort=True):
        acc = g.pivot_table(index="variant", columns="task", values="accuracy")
        avg = (acc["math"] + acc["code"]) / 2
        add("k0_code_py", acc.loc["py", "code"])
        add("k0_math_py", acc.loc["py", "math"])
        add("k1_math_py_minus_nl", acc.loc["py", "math"] - acc.loc["nl", "math"])
        add("k1_code_py_minus_nl", acc.loc["py", "code"] - acc.loc["nl", "code"])
        add("k1_math_py_minus_zeroshot", acc.loc["py", "math"] - acc.loc[plan.ZEROSHOT, "math"])
        drop = avg["py"] - avg
        add("k2_structural_minus_semantic_drop", drop[list(STRUCTURAL)].mean() - drop[list(SEMANTIC)].mean())
        add("k3_pseudo_minus_py_math", acc.loc["pseudo", "math"] - acc.loc["py", "math"])
        add("k3_flowchart_minus_py_math", acc.loc["flowchart", "math"] - acc.loc["py", "math"])
        add("k4_compressed_over_py", avg["compressed"] / avg["py"] if avg["py"] > 0 else np.nan)
        add("k5_fictional_over_py", avg["fictional"] / avg["py"] if avg["py"] > 0 else np.nan)
        add("k5_mislead_over_py", avg["py_commmislead"] / avg["py"] if avg["py"] > 0 else np.nan)
        add("k5_regular_minus_kwrand", min(avg["fictional"], avg["py_commmislead"]) - avg["py_kwrand"])
        for variant in acc.index:
            for task in acc.columns:
                add(f"info_acc_{task}_{variant}", acc.loc[variant, task])
    return out


def control_tables(t: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """claims.yaml `controls:` as tables: the control's rows in the mechanism's place (claims.stand_in)."""
    mismatch = {v: "py_mismatch" for v in ("py", "pseudo", "flowchart", "compressed", "fictional", "py_commmislead")}
    return {"mismatched_code": claims_mod.stand_in(t, "variant", mismatch),
            "structure_intact": claims_mod.stand_in(t, "variant", {v: "py" for v in STRUCTURAL})}


def aa_nulls(t: pd.DataFrame, measured: dict) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls, measured like the method: the comparator's scores of the next seed (cyclically) in the credited
    variants' place, per task (claims.stand_in with seed): nl in py's place (K1), py in the renderings' place
    (K3-K5); for K2 the mean of the semantic variants of the next seed in each structural variant's place, so that
    the structural drop is another seed's semantic drop. With one seed the comparator
    has no independent partner: every value is NaN (inconclusive)."""
    names = [*AA, "aa_semantic"]
    if t.seed.nunique() < 2:
        return claims_mod.without_values(measured, names)
    tables = {name: claims_mod.stand_in(t, "variant", rep, seed="seed", keys=["task"]) for name, rep in AA.items()}
    semantic = claims_mod.next_seed(t[t.variant.isin(SEMANTIC)], "seed", ["task", "variant"])
    pooled = semantic.groupby(["seed", "task"], as_index=False).accuracy.mean()
    tables["aa_semantic"] = pd.concat([t[~t.variant.isin(STRUCTURAL)], *(pooled.assign(variant=v) for v in STRUCTURAL)],
                                      ignore_index=True)
    return {name: measure(table) for name, table in tables.items()}


def relabelled(t: pd.DataFrame, pick) -> pd.DataFrame:
    """t with each seed's variants renamed by `pick(rng) -> {variant: the variant whose place it takes}`."""
    out = []
    for seed, g in t.groupby("seed", sort=True):
        rename = pick(np.random.default_rng(PLACEBO_SEED + int(seed)))
        out.append(g.assign(variant=g.variant.map(lambda v: rename.get(v, v))))
    return pd.concat(out, ignore_index=True)


def shuffled_structure(rng: np.random.Generator) -> dict[str, str]:
    """K2's placebo labels: two of the five perturbations, drawn among the pairs that are not the structural ones,
    called structural, the other three semantic."""
    perturbed = sorted(STRUCTURAL + SEMANTIC)
    pairs = [pair for pair in combinations(perturbed, 2) if set(pair) != set(STRUCTURAL)]
    pair = pairs[int(rng.integers(len(pairs)))]
    rest = [v for v in perturbed if v not in pair]
    return dict(zip([*pair, *rest], [*STRUCTURAL, *SEMANTIC]))


def shuffled_regularity(rng: np.random.Generator) -> dict[str, str]:
    """K5's placebo labels: the irregular role (random keywords) given to one of the two regular renderings, drawn,
    and that rendering's role to random keywords."""
    regular = REGULAR[int(rng.integers(len(REGULAR)))]
    return {regular: IRREGULAR, IRREGULAR: regular}


def placebos(t: pd.DataFrame) -> dict[str, dict[str, list[float]]]:
    """The placebos, measured like the method: for K3 and K4 the credited renderings of another program in their
    place (claims.stand_in); for K2 which perturbations count as structural, and for K5 which rendering counts as
    irregular, drawn at random per seed on the same scores."""
    tables = {name: claims_mod.stand_in(t, "variant", rep) for name, rep in MISMATCHED.items()}
    tables["placebo_shuffled_structure"] = relabelled(t, shuffled_structure)
    tables["placebo_shuffled_regularity"] = relabelled(t, shuffled_regularity)
    return {name: measure(table) for name, table in tables.items()}


def read_scores(p: dict) -> pd.DataFrame:
    rows = []
    for path in plan.all_scores(p):
        s = read_json(path)
        rows += [{"variant": s["variant"], "seed": s["seed"], "task": task, "accuracy": a,
                  "answered": s["answered"][task]} for task, a in s["accuracy"].items()]
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("code_reasoning", "evaluate", __doc__)
    step.parser.add_argument("--sets", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    t = read_scores(p)
    measured = measure(t)
    controls = {name: measure(c) for name, c in control_tables(t).items()} | aa_nulls(t, measured) | placebos(t)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    rho = read_json(args.sets)["density"]
    table = t.groupby(["variant", "task"], as_index=False).agg(accuracy=("accuracy", "mean"), sd=("accuracy", "std"),
                                                               answered=("answered", "mean"))
    table["rho"] = table.variant.map(rho)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.claims])


if __name__ == "__main__":
    main()
