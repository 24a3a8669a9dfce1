"""The paper's main table, the exact-teacher runs of every seed, the mined error words, each claim's metrics per
unit (for the method and, by the same function, for each control), and claims.yaml.

Units: a (language, seed) exact-teacher run for C1 and C4; a language whose fully trained Transformer teacher passes
the accuracy gate for C2 and C3; an under-trained teacher (one per seed) for C5.

Controls (claims.yaml `controls:`), each measured by `measure` with the control's columns in place of L*_nsp's:
perturbed_teacher (C1: L*_nsp on the exact teacher of a perturbed DFA), binary_labels (C2: classic L* on the same
Transformer teachers), shuffled_bits (C4: L*_nsp with its continuation bits permuted; also C4's placebo),
mutant_mining (C5: the words of a perturbed target mined in place of the extraction's; also C5's placebo),
placebo_continuation_bits (C2's placebo: L*_nsp with the Transformer teacher's continuation bits shuffled), and the
A/A null aa_classic (C4: classic L* of the next seed in L*_nsp's place, `aa_null`).

The runs and their files come from the plan (params.yaml: lnsp, through plan.py), not from the command line."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import plan

READS = ("lnsp",)

CLAIMS = Path(__file__).with_name("claims.yaml")
GATE = plan.GATE  # spec C2/C3: a teacher counts when its held-out NSP string accuracy is >= 99.9 %
C4_FACTOR = 3     # spec C4: classic L* needs >= 3x the samples of L*_nsp to reach the target
# the columns of L*_nsp that a control's run replaces (as_learner), per table
EXACT_COLS = ("nsp_n_states", "nsp_equivalent", "nsp_converged", "nsp_samples_to_last_cex")
CLASSIC_COLS = ("nsp_n_states", "nsp_equivalent", "nsp_converged", "nsp_samples_to_last_cex", "nsp_time_s")
MUTANT_COLS = ("nsp_equivalent", "mined_frac_confirmed")
SHUF_KEYS = ("n_states", "equivalent", "converged", "samples_to_last_cex", "time_s")  # C2's placebo, extract's "shuf"
# A/A nulls (claims.yaml `nulls:`): the comparator whose run of the next seed of the same language takes L*_nsp's place
NULLS = {"aa_classic": "classic"}


def flag(series: pd.Series) -> pd.Series:
    """A boolean column read back from CSV (bool, or the strings 'True'/'False')."""
    return series.astype(str).str.lower().eq("true")


def family(language: pd.Series) -> pd.Series:
    """tomita / parity / dyck, from the language names of languages.py."""
    return language.str.replace(r"^(tomita|dyck)\S*$", r"\1", regex=True)


def teacher_rows(records: list[dict]) -> pd.DataFrame:
    """One row per extraction record (extract's .json): the teacher's accuracy, L*_nsp's, classic L*'s and the
    perturbed target's (C5's control) results."""
    rows = []
    for r in records:
        t, nsp, cls, mined, mutant = r["teacher"], r["nsp"], r["classic"], r["mined"], r["mutant"]
        rows.append({"language": r["language"], "variant": r["variant"], "seed": r["seed"], "steps": t["steps"],
                     "heldout_string_acc": t["heldout_string_acc"], "own_string_acc": t["own_string_acc"],
                     "heldout_label_acc": t["heldout_label_acc"], "train_seconds": t["time_s"],
                     **{f"nsp_{k}": nsp[k] for k in ("n_states", "target_states", "equivalent", "converged", "n_mq",
                                                      "n_gen", "n_samples", "samples_to_last_cex", "rounds", "time_s")},
                     **{f"classic_{k}": cls[k] for k in ("n_states", "equivalent", "converged", "n_mq",
                                                          "samples_to_last_cex", "rounds", "time_s")},
                     "mined_words": len(mined["words"]), "mined_confirmed": int(sum(mined["confirmed"])),
                     "mined_frac_confirmed": mined["frac_confirmed"],
                     "mutant_equivalent": mutant["equivalent"], "mutant_flipped_state": mutant["flipped_state"],
                     "mutant_mined_frac_confirmed": mutant["mined"]["frac_confirmed"],
                     # C2's placebo (gated fully trained teachers only; NaN elsewhere): continuation bits shuffled
                     **{f"shuf_{k}": r.get("shuf", {}).get(k, np.nan) for k in SHUF_KEYS}})
    t = pd.DataFrame(rows)
    t["family"] = family(t.language)
    t["gated"] = (t.variant == "full") & (t.heldout_string_acc >= GATE)
    return t


def as_learner(table: pd.DataFrame, prefix: str, cols) -> pd.DataFrame:
    """``table`` with a control's (or baseline's) run in place of L*_nsp's: each column of ``cols``
    (``nsp_<x>`` or ``<x>``) replaced by ``<prefix>_<x>``; a missing column is a KeyError, never a silent reuse of
    L*_nsp's value."""
    out = table.copy()
    for col in cols:
        out[col] = table[f"{prefix}_{col.removeprefix('nsp_')}"]
    return out


def c4_outcomes(d: pd.DataFrame) -> pd.Series:
    """Per Dyck (language, seed) run, L*_nsp against classic L* within the same budget: 1 = L*_nsp wins (both reach
    the target and classic needs >= C4_FACTOR times, and more, samples to its last counterexample; or classic
    settles on a wrong DFA), 0 = L*_nsp loses (it settles on a wrong DFA, runs out of budget where classic reaches
    the target, or classic reaches it with fewer than C4_FACTOR times the samples), NaN = tie (one learner ran out
    of budget and the other did not lose: how many samples it would have needed is unknown)."""
    nsp_conv, cls_conv = flag(d.nsp_converged), flag(d.classic_converged)
    nsp_reached = nsp_conv & flag(d.nsp_equivalent) & (d.nsp_n_states == d.target_states)
    cls_reached = cls_conv & flag(d.classic_equivalent)
    cls_wrong = cls_conv & ~flag(d.classic_equivalent)
    nsp_s, cls_s = d.nsp_samples_to_last_cex, d.classic_samples_to_last_cex
    faster = (cls_s >= C4_FACTOR * nsp_s) & (cls_s > nsp_s)
    win = nsp_reached & ((cls_reached & faster) | cls_wrong)
    tie = (nsp_reached & ~cls_conv) | (~nsp_conv & ~cls_reached)
    return pd.Series(np.where(win, 1.0, np.where(tie, np.nan, 0.0)), index=d.index)


def measure(exact: pd.DataFrame, teachers: pd.DataFrame) -> dict[str, list[float]]:
    """{claim metric: [value per unit]}; NaN values are left out, not counted; a metric with no unit in this run
    is an empty list (its check reads "no value measured", never a silent pass)."""
    m: dict[str, list[float]] = {}

    def put(name, values):
        m[name] = [float(v) for v in np.asarray(values, dtype=float).ravel() if not np.isnan(v)]

    # C1: exact teacher -> equivalent to the target with the same (minimal) number of states, every language and seed
    put("c1_exact", (flag(exact.nsp_equivalent) & (exact.nsp_n_states == exact.target_states)).astype(float))
    # C2, C3: fully trained teachers that pass the accuracy gate
    full = teachers[teachers.variant == "full"]
    g = full[full.gated]
    put("c2_equivalent", flag(g.nsp_equivalent).astype(float))
    tom, dyck = g[g.family == "tomita"], g[g.family == "dyck"]
    put("c2_tomita_samples", tom.nsp_samples_to_last_cex)
    put("c2_tomita_seconds", tom.nsp_time_s)
    put("c2_dyck_samples", dyck.nsp_samples_to_last_cex)
    put("c2_n_gated", [len(g)] if len(full) else [])
    put("c3_state_excess", g.nsp_n_states - g.nsp_target_states)
    ungated = full[~full.gated]
    put("info_c6_ungated_state_excess", ungated.nsp_n_states - ungated.nsp_target_states)
    # C4: per Dyck language and seed (exact teacher): wins over the decided runs; no run lost (ties allowed)
    outcome = c4_outcomes(exact[exact.family == "dyck"])
    put("c4_nsp_wins", outcome)
    put("c4_nsp_not_beaten", (outcome != 0).astype(float))
    # C5: under-trained teachers: extraction differs from the target; mined words are confirmed teacher errors
    w = teachers[teachers.variant == "weak"]
    put("c5_not_equivalent", 1.0 - flag(w.nsp_equivalent).astype(float))
    put("c5_frac_confirmed", w.mined_frac_confirmed)
    return m


def aa_null(exact: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """The A/A null's exact-teacher table: L*_nsp's columns (EXACT_COLS) taken from the comparator's run (``prefix``)
    of the next seed of the same language (``claims.next_seed``), the comparator's own columns kept, so that C4 pits
    the comparator against an independent run of itself. A language with one seed has no independent partner and is
    left out."""
    donor = as_learner(exact, prefix, EXACT_COLS)[["language", "seed", *EXACT_COLS]]
    donor = claims_mod.next_seed(donor, "seed", ["language"])
    return exact.drop(columns=list(EXACT_COLS)).merge(donor, on=["language", "seed"], how="inner")


def control_measures(exact: pd.DataFrame, teachers: pd.DataFrame) -> dict[str, dict[str, list[float]]]:
    """Each control of claims.yaml measured by the same function as L*_nsp, its run in L*_nsp's place; each A/A null
    keeps every metric L*_nsp has (empty where no independent partner exists: "no value measured")."""
    own = measure(exact, teachers)
    nulls = {name: measure(aa_null(exact, prefix), teachers) for name, prefix in NULLS.items()}
    return {"perturbed_teacher": measure(as_learner(exact, "pert", EXACT_COLS), teachers),
            "shuffled_bits": measure(as_learner(exact, "shuf", EXACT_COLS), teachers),
            "binary_labels": measure(exact, as_learner(teachers, "classic", CLASSIC_COLS)),
            "placebo_continuation_bits": measure(exact, as_learner(teachers, "shuf", CLASSIC_COLS)),
            "mutant_mining": measure(exact, as_learner(teachers, "mutant", MUTANT_COLS))} | {
        name: {metric: null.get(metric, []) for metric in own} for name, null in nulls.items()}


def main_table(exact: pd.DataFrame, teachers: pd.DataFrame) -> pd.DataFrame:
    """The paper's main table, one row per language: target size; L*_nsp with the exact teacher (seed 0; exact runs
    over all seeds); the fully trained Transformer teacher of the lowest seed (accuracy, extraction); classic L*
    (exact teacher, seed 0; and on the Transformer teacher)."""
    s0 = exact[exact.seed == exact.seed.min()].set_index("language")
    ok = (flag(exact.nsp_equivalent) & (exact.nsp_n_states == exact.target_states)).groupby(exact.language)
    t = pd.DataFrame({"language": s0.index, "family": s0.family.values, "target_states": s0.target_states.values,
                      "exact_states": s0.nsp_n_states.values, "exact_mq": s0.nsp_n_mq.values,
                      "exact_samples": s0.nsp_samples_to_last_cex.values, "exact_seconds": s0.nsp_time_s.values,
                      "exact_runs_ok": ok.sum().reindex(s0.index).values, "exact_runs": ok.size().reindex(s0.index).values,
                      "classic_samples": s0.classic_samples_to_last_cex.values, "classic_states": s0.classic_n_states.values,
                      "classic_ok": (flag(s0.classic_equivalent) & flag(s0.classic_converged)).values})
    full = teachers[teachers.variant == "full"]
    full = full[full.seed == full.seed.min()].set_index("language")
    cols = {"heldout_string_acc": "teacher_acc", "gated": "gated", "nsp_n_states": "ext_states",
            "nsp_equivalent": "ext_equivalent", "nsp_converged": "ext_converged", "nsp_samples_to_last_cex": "ext_samples",
            "nsp_n_mq": "ext_mq", "nsp_time_s": "ext_seconds", "classic_samples_to_last_cex": "tclassic_samples",
            "classic_n_states": "tclassic_states", "classic_equivalent": "tclassic_equivalent",
            "mined_confirmed": "mined_confirmed", "mined_words": "mined_words"}
    return t.merge(full[list(cols)].rename(columns=cols), left_on="language", right_index=True, how="left")


def mined_table(records: list[dict]) -> pd.DataFrame:
    rows = [{"language": r["language"], "variant": r["variant"], "seed": r["seed"], "rank": i, "word": w,
             "confirmed": c}
            for r in records for i, (w, c) in enumerate(zip(r["mined"]["words"], r["mined"]["confirmed"]))]
    return pd.DataFrame(rows, columns=["language", "variant", "seed", "rank", "word", "confirmed"])


def main(argv=None):
    step = Step("lnsp", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True, help="the main table (.csv)")
    step.parser.add_argument("--exact-table", type=Path, required=True, help="every exact-teacher run (.csv)")
    step.parser.add_argument("--teachers", type=Path, required=True, help="every Transformer teacher's extraction (.csv)")
    step.parser.add_argument("--mined", type=Path, required=True, help="mined difference words (.csv)")
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)  # p: the paper's section (plan.py: which runs exist)
    exact = pd.concat([pd.read_csv(path) for path in plan.exact_paths(p)], ignore_index=True)
    found = {(r["variant"], r["seed"], r["language"]): r for path in plan.extract_paths(p) for r in read_json(path)["records"]}
    records = [found[key] for key in plan.teachers(p)]  # variant by variant, as the plan lists the teachers
    teachers = teacher_rows(records)
    result = claims_mod.check(CLAIMS, measure(exact, teachers), args.profile, args.claims, step.log,
                              controls=control_measures(exact, teachers))
    write_text(args.table, main_table(exact, teachers).to_csv(index=False, float_format="%.6g"))
    write_text(args.exact_table, exact.to_csv(index=False, float_format="%.6g"))
    write_text(args.teachers, teachers.to_csv(index=False, float_format="%.6g"))
    write_text(args.mined, mined_table(records).to_csv(index=False))
    step.log("gated teachers: " + json.dumps(sorted(teachers[teachers.gated].language)))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.exact_table, args.teachers, args.mined, args.claims])


if __name__ == "__main__":
    main()
