"""Every run's generated test audio scored by the evaluator (MSR components per pair, FAD-mini against the reference
test audio), the per-relation components of all runs in one table, each claim's metric measured per seed, for the
runs, for the negative controls, for the A/A nulls in their place and for the placebo, and claims.yaml judged. The reference audio
(scored once by the train_evaluator step) is a run like the others, the same for every seed. The runs are found through
the plan."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, read_npz, write_text
from workflow.core.step import Step

from . import models as M
from . import plan as P
from . import records

READS = ("aurelius.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
# Negative controls (claims.yaml `controls:`): the run each one puts in which run's place.
CONTROLS = {"reference_audio": {"zs": "reference", "ft_3": "reference"},
            "shuffled_captions": {"ft_3": "ft_shuffled_3"},
            "scrambled_pretraining": {"ft_1": "ft_scrambled_1", "ft_3": "ft_scrambled_3"}}
# A/A nulls (claims.yaml `nulls: {aa: ...}`): the comparator's runs each puts in the method's runs' place, from another
# seed.
AA = {"aa_zs": {"ft_3": "zs"}, "aa_fs": {"ft_1": "fs_1", "ft_3": "fs_3"}, "aa_ft": {"fs_1": "ft_1", "fs_3": "ft_3"}}

PLACEBO_SEED = 5000  # K5's placebo: seed s permutes the relations' difficulty labels with rng(PLACEBO_SEED + s)


def measure_seed(t: pd.DataFrame, reference: dict) -> dict[str, float]:
    """Every claim's metric on one seed's rows of the table (one row per run and relation)."""
    by_run = {run: g for run, g in t.groupby("run")}
    msr = {run: float(g.msr.mean()) for run, g in by_run.items()}
    fad = {run: float(g.fad.iloc[0]) for run, g in by_run.items()}
    zs, ft = by_run["zs"], by_run["ft_3"]
    easy = ft[~records.is_hard(ft)].relation.size
    return {
        "k6_detector_map": reference["detector_map"],
        "k6_effect_accuracy": reference["effect_accuracy"],
        "k6_reference_msr": float(by_run["reference"].msr.mean()),
        "k7_ft_val_presence": float(ft.val_presence.iloc[0]),
        "k1_zs_msr": msr["zs"],
        "k1_rel_minus_04_pre": float(zs.relation.mean() - 0.4 * zs.presence.mean()),
        "k2_ft_minus_2_zs": msr["ft_3"] - 2 * msr["zs"],
        "k2_fad_change": fad["ft_3"] - fad["zs"],
        "k3_ft_minus_fs_third": msr["ft_1"] - msr["fs_1"],
        "k3_ft_minus_fs_full": msr["ft_3"] - msr["fs_3"],
        "k4_fs_gain_minus_ft_gain": (msr["fs_3"] - msr["fs_1"]) - (msr["ft_3"] - msr["ft_1"]),
        "k5_easy_minus_hard_rel": (records.mean_or_nan(ft[~records.is_hard(ft)].relation)
                                   - records.mean_or_nan(ft[records.is_hard(ft)].relation)) if easy else np.nan,
        "info_zs_msr": msr["zs"], "info_ft_msr": msr["ft_3"], "info_fs_msr": msr["fs_3"], "info_ft_fad": fad["ft_3"],
    }


def measure(table: pd.DataFrame, reference: dict) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for _, t in table.groupby("seed"):
        for name, value in measure_seed(t, reference).items():
            out.setdefault(name, []).append(float(value))
    return out | {name: out[name][:1] for name in out if name.startswith("k6_")}  # one evaluator: one unit


def aa_nulls(table: pd.DataFrame, reference: dict, measured: dict) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls, measured like the runs they replace: the comparator's rows of the next seed (cyclically:
    claims.stand_in with seed), relation by relation, in the method's runs' place (the reference audio stays). With
    one seed the comparator has no independent partner: every value is NaN (inconclusive)."""
    if table.seed.nunique() < 2:
        return claims_mod.without_values(measured, AA)
    return {name: measure(claims_mod.stand_in(table, "run", swap, seed="seed", keys=["name"]), reference)
            for name, swap in AA.items()}


def shuffled_difficulty(table: pd.DataFrame) -> pd.DataFrame:
    """K5's placebo: the table with each seed's relation labels (group and arity, which make a relation easy or hard)
    permuted among the relations by a seeded permutation (the same for every run of the seed, another per seed): the
    same audio, scores and number of hard relations, only which relations are called hard made inert."""
    out = []
    for seed, t in table.groupby("seed", sort=True):
        labels = t.drop_duplicates("name").set_index("name").sort_index()[["group", "arity"]]
        perm = np.random.default_rng(PLACEBO_SEED + int(seed)).permutation(len(labels))
        moved = labels.iloc[perm].set_axis(labels.index)
        out.append(t.assign(group=t.name.map(moved.group), arity=t.name.map(moved.arity)))
    return pd.concat(out, ignore_index=True)


def placebos(table: pd.DataFrame, reference: dict) -> dict[str, dict[str, list[float]]]:
    """The placebos, measured like the runs (claims.yaml `nulls: {placebo: ...}`; K5's only, the others name runs)."""
    return {"placebo_shuffled_difficulty": {"k5_easy_minus_hard_rel":
                                            measure(shuffled_difficulty(table), reference)["k5_easy_minus_hard_rel"]}}


def score_runs(plan: dict, evaluator_path: Path, pairs: dict, reference_mels: np.ndarray) -> list[dict]:
    """Every run's record: per test pair its MSR components; the run's FAD-mini; the mAPre of its audio for the
    validation captions (K7, the generator's own gate)."""
    evaluator = M.Evaluator.load(evaluator_path)
    reference_embedding = evaluator.frames(reference_mels)[2]
    out = []
    for run in plan["runs"]:
        for seed in plan["seeds"]:
            generated = read_npz(P.run_path(run, seed))
            rows, embedding = M.score(evaluator, generated["generated"].astype(np.float32), pairs["test"])
            val = M.score(evaluator, generated["generated_val"].astype(np.float32), pairs["val"])[0]
            val_presence = records.pairs_summary(pairs["val"], val)["mAPre"]
            out.append(records.run_record(run, seed, pairs["test"], rows, M.frechet(embedding, reference_embedding),
                                          extra={"val_presence": val_presence}))
    return out


def scores_table(runs: list[dict], reference: dict, seeds: list[int]) -> pd.DataFrame:
    """Per (run, seed, relation) the MSR components and the run's FAD; the reference repeated for every seed."""
    runs = records.table(runs)
    ref = records.per_relation(reference).assign(run="reference", fad=reference["fad"])
    return pd.concat([runs, *(ref.assign(seed=s) for s in seeds)], ignore_index=True)


def main(argv=None):
    step = Step("aurelius", "evaluate", __doc__)
    for name in ("evaluator", "pairs", "mels", "reference", "table", "claims"):
        step.parser.add_argument(f"--{name}", type=Path, required=True)
    args, p = step.start(argv)
    reference = read_json(args.reference)
    runs = score_runs(p, args.evaluator, read_json(args.pairs), read_npz(args.mels)["test"].astype(np.float32))
    for r in runs:
        step.log(f"{r['run']} seed {r['seed']}: " + ", ".join(f"{k} {v:.3f}" for k, v in records.summary(r).items())
                 + f", FAD {r['fad']:.2f}, validation mAPre {r['val_presence']:.3f}")
    table = scores_table(runs, reference, p["seeds"])
    step.log(f"{table.run.nunique()} runs, {table.seed.nunique()} seeds, {table.name.nunique()} relations")
    measured = measure(table, reference)
    controls = {name: measure(claims_mod.stand_in(table, "run", swap), reference) for name, swap in CONTROLS.items()}
    controls |= aa_nulls(table, reference, measured)
    controls |= placebos(table, reference)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    per_run = {f"{r['run']}_s{r['seed']}_mAMSR": records.summary(r)["mAMSR"] for r in runs}
    metrics = claims_mod.as_metrics(result) | {k: float(np.nanmean(v)) for k, v in measured.items()} | per_run
    step.finish(metrics=metrics, artifacts=[args.table, args.claims], outputs=[args.table, args.claims])


if __name__ == "__main__":
    main()
