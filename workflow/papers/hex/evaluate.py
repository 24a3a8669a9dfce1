"""Collect every seed's decodes, vote (HEX, self-consistency, lowest NLL, scaling curves), measure each claim's
metric per seed for the method, for its negative controls, for its A/A nulls and for K4's placebo, and judge
claims.yaml."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import write_text
from workflow.core.step import Step

from . import plan

READS = ("hex.decode", "hex.plan")

CLAIMS = Path(__file__).with_name("claims.yaml")
PLACEBO_SEED = 9000  # K4's placebo: model seed s draws its random picks with rng(PLACEBO_SEED + s)


def vote(answers: list) -> tuple[int | None, bool]:
    """Majority vote over parsed answers in tie-break order (None excluded): (answer, whether the top count was
    shared). Ties go to the first-inserted mode (the order is smallest block first)."""
    counts = Counter(a for a in answers if a is not None)
    if not counts:
        return None, False
    ranked = counts.most_common()
    return ranked[0][0], len(ranked) > 1 and ranked[1][1] == ranked[0][1]


def answers_by_path(test: pd.DataFrame, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(answers, nll, truth) as (paths, problems) object/float arrays, paths in the given order."""
    rows = test.set_index(["decoder", "problem"]).sort_index()
    problems = sorted(test.problem.unique())
    pick = [(n, i) for n in names for i in problems]
    got = rows.loc[pick]
    shape = (len(names), len(problems))
    answers = np.array([None if pd.isna(a) else int(a) for a in got.answer], dtype=object).reshape(shape)
    truth = got.truth.to_numpy().reshape(shape)[0]
    return answers, got.nll.to_numpy(dtype=float).reshape(shape), truth


def vote_accuracy(answers: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(accuracy, tie rate) of the majority vote over the rows of answers, per problem."""
    votes = [vote(list(answers[:, j])) for j in range(answers.shape[1])]
    return (float(np.mean([a == t for (a, _), t in zip(votes, truth)])), float(np.mean([tie for _, tie in votes])))


def lowest_nll_accuracy(answers: np.ndarray, nll: np.ndarray, truth: np.ndarray) -> float:
    """Accuracy of picking, per problem, the answered path with the lowest NLL (none answered: wrong)."""
    picks = []
    for j in range(answers.shape[1]):
        answered = [i for i in range(answers.shape[0]) if answers[i, j] is not None]
        picks.append(answers[min(answered, key=lambda i: nll[i, j]), j] if answered else None)
    return float(np.mean([a == t for a, t in zip(picks, truth)]))


def random_pick_accuracy(answers: np.ndarray, truth: np.ndarray, rng: np.random.Generator) -> float:
    """Accuracy of picking, per problem, one answered path at random (none answered: wrong): the vote with its
    consensus made inert, among the same candidates as the lowest-NLL pick."""
    picks = []
    for j in range(answers.shape[1]):
        answered = [i for i in range(answers.shape[0]) if answers[i, j] is not None]
        picks.append(answers[answered[int(rng.integers(len(answered)))], j] if answered else None)
    return float(np.mean([a == t for a, t in zip(picks, truth)]))


def rank_trend(x: list[float], y: list[float]) -> float:
    """Spearman's rho; a constant series has no trend (0) rather than an undefined one."""
    from scipy.stats import spearmanr

    return 0.0 if len(set(y)) < 2 else float(spearmanr(x, y).statistic)


def scaling(answers: np.ndarray, truth: np.ndarray, sizes: list[int], draws: int, seed: int) -> pd.DataFrame:
    """Accuracy and tie rate of votes over random subsets of k paths (kept in tie-break order), mean over draws."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in sizes:
        got = [vote_accuracy(answers[np.sort(rng.choice(len(answers), k, replace=False))], truth) for _ in range(draws)]
        rows.append({"paths": k, "accuracy": float(np.mean([a for a, _ in got])), "tie_rate": float(np.mean([t for _, t in got]))})
    return pd.DataFrame(rows)


LONG = "long_"  # the prefix of every metric measured on the held-out longer chains (claims K2L, K2sL, K3L, K4L)


def measure(t: pd.DataFrame, decode: dict) -> tuple[dict[str, list[float]], pd.DataFrame]:
    """({metric: [value per seed]}, the test split's scaling curves) from the decodes of every seed: the test split's
    metrics, and the same metrics of the longer chains under their `long_` names."""
    test, curves = measure_split(t, decode, "test")
    long = measure_split(t, decode, "long")[0] if t.split.eq("long").any() else {}
    return test | {LONG + key: values for key, values in long.items()}, curves


def measure_split(t: pd.DataFrame, decode: dict, split: str) -> tuple[dict[str, list[float]], pd.DataFrame]:
    """({metric: [value per seed]}, scaling curves) from the decodes of every seed on one split."""
    out: dict[str, list[float]] = {}
    curves = []

    def add(key, v):
        out.setdefault(key, []).append(float(v))

    arms = decode["arms"]
    for seed, g in t[t.split.eq(split)].groupby("seed", sort=True):
        acc = g.groupby("decoder").correct.mean()
        fixed = {b: acc[f"fixed/b{b}"] for b in decode["fixed_blocks"]}
        best, margin = max(fixed.values()), acc["one/margin"]
        add("k0_best_fixed_acc", best)
        add("k1_best_fixed_minus_margin", best - margin)
        collapse = g.groupby("decoder").collapsed.mean()
        add("k1c_collapse_one_block", np.mean([collapse[f"one/{r}"] for r in decode["one_block"]]))
        add("k1c_collapse_semi_ar_max", max(collapse[f"fixed/b{b}"] for b in decode["fixed_blocks"] if b < 32))
        for name, prefix in (("paper", ""), ("small", "s")):
            names = [d for d, _, _ in plan.arm_paths(arms[name], name)]
            answers, nll, truth = answers_by_path(g, names)
            hex_acc, ties = vote_accuracy(answers, truth)
            sc_names = [f"sc_{name}/s{k}" for k in range(plan.paths_of(arms[name]))]
            sc_acc, _ = vote_accuracy(answers_by_path(g, sc_names)[0], truth)
            add(f"k2{prefix}_hex_minus_best_fixed", hex_acc - best)
            add(f"k2{prefix}_hex_over_margin", hex_acc / margin if margin > 0 else float("nan"))
            add(f"k3{prefix}_hex_minus_sc", hex_acc - sc_acc)
            add(f"info_hex_acc_{name}", hex_acc)
            add(f"info_sc_acc_{name}", sc_acc)
            add(f"info_mean_single_path_acc_{name}", float(np.mean([acc[n] for n in names])))
            add(f"info_tie_rate_{name}", ties)
            if name == "paper":
                nll_pick = lowest_nll_accuracy(answers, nll, truth)
                add("k4_vote_minus_nll", hex_acc - nll_pick)
                add("info_nll_pick_acc_paper", nll_pick)
                curve = scaling(answers, truth, decode["scaling_paths"], decode["scaling_draws"], seed)
                add("k5_spearman_paths_accuracy", rank_trend(list(curve.paths), list(curve.accuracy)))
                several = curve[curve.paths >= 2]
                add("k5_spearman_paths_tie_rate", rank_trend(list(several.paths), list(several.tie_rate)))
                curves.append(curve.assign(seed=seed))
        add("info_margin_acc", margin)
        for d, a in acc.items():
            if d.startswith(("one/", "fixed/")):
                add(f"info_acc_{d.replace('/', '_')}", a)
    return out, pd.concat(curves, ignore_index=True)


MAIN_TABLE = {  # the paper's Fig. 1 and Table 2 rows: method -> the measured metric holding its accuracy per seed
    "top-k margin (one block)": "info_margin_acc", "random (one block)": "info_acc_one_random",
    "low-confidence (one block)": "info_acc_one_low_confidence", "best fixed semi-AR block": "k0_best_fixed_acc",
    "mean single HEX path": "info_mean_single_path_acc_paper", "self-consistency (paper arm)": "info_sc_acc_paper",
    "HEX (paper arm)": "info_hex_acc_paper", "self-consistency (small arm)": "info_sc_acc_small",
    "HEX (small arm)": "info_hex_acc_small"}


def main_table(measured: dict, seeds: list[int]) -> pd.DataFrame:
    return pd.DataFrame([{"method": method, "seed": s, "accuracy": v} for method, metric in MAIN_TABLE.items()
                         if metric in measured for s, v in zip(seeds, measured[metric])])


def decoder_table(t: pd.DataFrame) -> pd.DataFrame:
    """Every decoder's accuracy, collapse and NLL on the test split (mean over seeds), its accuracy per number of
    operations there, and on the long split (`accuracy_long`)."""
    keys = ["decoder", "family", "block", "temperature"]
    test = t[t.split.eq("test")]
    out = test.groupby(keys, as_index=False).agg(accuracy=("correct", "mean"), collapse=("collapsed", "mean"),
                                                 nll=("nll", "mean"), forwards=("forwards", "first"))
    per_ops = test.pivot_table(index="decoder", columns="ops", values="correct", aggfunc="mean")
    long = t[t.split.eq("long")].groupby("decoder").correct.mean().rename("accuracy_long")
    return out.merge(per_ops.add_prefix("accuracy_ops").reset_index(), on="decoder").merge(
        long.reset_index(), on="decoder", how="left")


def control_tables(t: pd.DataFrame, decode: dict) -> dict[str, pd.DataFrame]:
    """claims.yaml `controls:` as tables: the control's rows in the mechanism's place (claims.stand_in)."""
    semi_ar = {f"fixed/b{b}": "one/low_confidence" for b in decode["fixed_blocks"]}
    first, independent = {}, {}
    for name in plan.ARMS:
        names = [d for d, _, _ in plan.arm_paths(decode["arms"][name], name)]
        first |= {n: names[0] for n in names[1:]}
        independent |= {n: f"sc2_{name}/s{k}" for k, n in enumerate(names)}
    return {"one_block_for_semi_ar": claims_mod.stand_in(t, "decoder", semi_ar),
            "single_path_for_vote": claims_mod.stand_in(t, "decoder", first),
            "sc_for_hex": claims_mod.stand_in(t, "decoder", independent)}


UNIT = ["split", "problem"]  # what names a unit of the decodes table besides its (model) seed


def best_fixed_rows(t: pd.DataFrame, decode: dict) -> pd.DataFrame:
    """Each seed's best fixed block on each judged split (the comparator of K2 and K2L; ties: the smaller block), its
    rows of that split relabelled `best_fixed`."""
    out = []
    for _, g in t[t.split.isin(plan.JUDGED)].groupby(["seed", "split"], sort=True):
        acc = g.groupby("decoder").correct.mean()
        best = max(decode["fixed_blocks"], key=lambda b: (acc[f"fixed/b{b}"], -b))
        out.append(g[g.decoder.eq(f"fixed/b{best}")].assign(decoder="best_fixed"))
    return pd.concat(out, ignore_index=True)


def aa_nulls(t: pd.DataFrame, decode: dict, measured: dict) -> dict[str, dict[str, list[float]]]:
    """The A/A nulls (claims.yaml `nulls: {aa: ...}`), measured like the method: the comparator of another model
    seed (the next one, cyclically: claims.stand_in with seed) in the method's place.
      aa_margin: top-k margin (one block) in every fixed block's place (K1, K1c);
      aa_best_fixed: the seed's best fixed block in every HEX path's place, both arms (K2, K2s);
      aa_nll_pick: K4's vote replaced by the lowest-NLL pick, i.e. that pick's accuracy minus this seed's (a pick is
        a function of the candidates, so no table of paths puts one in the vote's place).
    K3's A/A null is the control sc_for_hex (a second self-consistency draw of the same model). With one seed the
    comparator has no independent partner: every value is NaN (inconclusive)."""
    seeds = sorted(t.seed.unique())
    if len(seeds) < 2:
        return claims_mod.without_values(measured, ("aa_margin", "aa_best_fixed", "aa_nll_pick"))
    paths = [d for name in plan.ARMS for d, _, _ in plan.arm_paths(decode["arms"][name], name)]
    margin = claims_mod.stand_in(t, "decoder", {f"fixed/b{b}": "one/margin" for b in decode["fixed_blocks"]},
                                 seed="seed", keys=UNIT)
    best = claims_mod.stand_in(pd.concat([t, best_fixed_rows(t, decode)], ignore_index=True), "decoder",
                               {d: "best_fixed" for d in paths}, seed="seed", keys=UNIT)
    return {"aa_margin": measure(margin, decode)[0], "aa_best_fixed": measure(best, decode)[0],
            "aa_nll_pick": {prefix + "k4_vote_minus_nll": next_seed_minus_own(measured[prefix + "info_nll_pick_acc_paper"])
                            for prefix in ("", LONG) if prefix + "info_nll_pick_acc_paper" in measured}}


def next_seed_minus_own(values: list[float]) -> list[float]:
    """Per seed: the next seed's value (cyclically) minus its own."""
    return [b - a for a, b in zip(values, values[1:] + values[:1])]


def placebos(t: pd.DataFrame, decode: dict) -> dict[str, dict[str, list[float]]]:
    """K4's (and K4L's) placebo, measured like the method on the paper arm's same candidates: the majority vote
    replaced by a random pick among the answered paths (the consensus made inert), minus the lowest-NLL pick, per
    model seed and split."""
    out = {}
    names = [d for d, _, _ in plan.arm_paths(decode["arms"]["paper"], "paper")]
    for (split, seed), g in t[t.split.isin(plan.JUDGED)].groupby(["split", "seed"], sort=True):
        answers, nll, truth = answers_by_path(g, names)
        rng = np.random.default_rng(PLACEBO_SEED + int(seed))
        key = ("" if split == "test" else LONG) + "k4_vote_minus_nll"
        out.setdefault(key, []).append(random_pick_accuracy(answers, truth, rng) - lowest_nll_accuracy(answers, nll, truth))
    return {"placebo_random_pick": out}


def main(argv=None):
    step = Step("hex", "evaluate", __doc__)
    step.parser.add_argument("--main", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--scaling", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    table = pd.concat([pd.read_csv(path) for path in plan.decodes_paths(p)], ignore_index=True)
    table["answer"] = table.answer.astype("Int64")
    measured, curves = measure(table, p)
    controls = {name: measure(t, p)[0] for name, t in control_tables(table, p).items()} | aa_nulls(table, p, measured)
    controls |= placebos(table, p)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log, controls=controls)
    write_text(args.main, main_table(measured, sorted(table.seed.unique())).to_csv(index=False, float_format="%.6g"))
    write_text(args.table, decoder_table(table).to_csv(index=False, float_format="%.6g"))
    write_text(args.scaling, curves.to_csv(index=False, float_format="%.6g"))
    outputs = [args.main, args.table, args.scaling, args.claims]
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=outputs, outputs=outputs)


if __name__ == "__main__":
    main()
