"""C2, C3, C5: extract a DFA from each Transformer teacher of one seed with L*_nsp (NSP labels, generative
queries), mine the words where it differs from the target, and run classic L* (binary labels, samples of the
untruncated LM; the same L* and query budget) beside it; C5's control mines the words of a perturbed target instead
of the extraction; C2's placebo (the gated fully trained teachers, C2's units) runs L*_nsp with the teacher's continuation bits shuffled. One job per seed: its teachers (fully trained and under-trained) in turn, a few seconds each, each
from the same seeded state, as if it ran alone. The teachers and their checkpoints come from the plan (plan.py)."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import load_state, read_json, write_json
from workflow.core.step import Step, seed_everything

from . import methods, plan, teachers
from .plan import GATE

READS = ("lnsp.extract", "lnsp.learners", "lnsp.teachers", "lnsp.weak_teachers", "lnsp.variants")

KEYS = ("n_states", "target_states", "equivalent", "same_size", "converged", "n_mq", "n_gen", "n_samples",
        "samples_to_last_cex", "rounds", "time_s", "hyp_sizes", "distinguishing_word")


def extraction(teacher, name: str, seed: int, p: dict, placebo: bool = False) -> dict:
    """L*_nsp + error mining, classic L* on the same teacher within the same budget, and the mining of a
    perturbed target (C5's control): plain JSON-able dict. With ``placebo`` (the gated fully trained teachers: C2's placebo)
    also L*_nsp with the teacher's continuation bits shuffled (``shuf``), run last so that nothing before it changes."""
    common = methods.learner_settings(name, p)
    ext = methods.extract(teacher, name, seed, eps=common["eps"], delta=common["delta"], caps=common["caps"],
                          n_mined=p["n_mined"])
    cls = methods.run_classic(teacher, name, seed, **common)
    mutant = methods.mutant_mining(teacher, name, seed, n_mined=p["n_mined"])
    out = {"nsp": {k: ext[k] for k in KEYS} | {"dfa": ext["dfa"], "cex_kinds": ext["cex_kinds"]},
           "mined": ext["mined"],
           "classic": {k: cls[k] for k in KEYS} | {"frac_negative": cls["frac_negative"]},
           "mutant": mutant}
    if placebo:
        shuf = methods.shuffled_extraction(teacher, name, seed, eps=common["eps"], delta=common["delta"],
                                           caps=common["caps"])
        out["shuf"] = {k: shuf[k] for k in KEYS}
    return out


def extract_teacher(model: Path, summary: Path, seed: int, p: dict, log=print) -> dict:
    """The extraction record of one saved teacher: its language, variant, seed, training summary and ``extraction``."""
    ckpt, info = load_state(model), read_json(summary)
    meta = ckpt["meta"]
    teacher = teachers.load_teacher(meta["config"], ckpt["state_dict"], p_min=meta["p_min"])
    # C2's placebo runs where C2 has units: the fully trained teachers that pass the accuracy gate
    gated = meta["variant"] == "full" and info["heldout_string_acc"] >= GATE
    res = extraction(teacher, meta["language"], seed, p, placebo=gated)
    nsp, cls, mined, mutant = res["nsp"], res["classic"], res["mined"], res["mutant"]
    log(f"{meta['language']} ({meta['variant']}, seed {seed}): L*_nsp {nsp['n_states']}/{nsp['target_states']} "
        f"states, exact={nsp['equivalent']}, converged={nsp['converged']}, {nsp['n_mq']} MQs, last cex after "
        f"{nsp['samples_to_last_cex']} samples, {nsp['time_s']:.2f}s; mined {len(mined['words'])} words, "
        f"{sum(mined['confirmed'])} confirmed teacher errors | classic {cls['n_states']} states, "
        f"exact={cls['equivalent']}, converged={cls['converged']}, {cls['time_s']:.2f}s | perturbed target: "
        f"{sum(mutant['mined']['confirmed'])}/{len(mutant['mined']['words'])} confirmed"
        + (f" | shuffled bits {res['shuf']['n_states']} states, exact={res['shuf']['equivalent']}, "
           f"{res['shuf']['time_s']:.2f}s" if "shuf" in res else ""))
    return {"language": meta["language"], "variant": meta["variant"], "seed": seed, "teacher": info, **res}


def main(argv=None):
    step = Step("lnsp", "extract", __doc__)
    step.parser.add_argument("--seed", type=int, required=True, help="the teachers' seed, also the learners' sampling seed")
    step.parser.add_argument("--out", type=Path, required=True, help=".json: one record per teacher, in the plan's order")
    args, p = step.start(argv)
    records = []
    for variant, lang in plan.extract_teachers(step.subtree("lnsp"), args.seed):
        seed_everything(args.seed)  # every teacher's extraction starts from the same state, as in a job of its own
        files = plan.teacher_files(variant, args.seed, lang)
        records.append(extract_teacher(Path(files["model"]), Path(files["summary"]), args.seed, p, step.log))
    write_json(args.out, {"seed": args.seed, "records": records})
    step.finish(metrics={"teachers": len(records), "equivalent": sum(bool(r["nsp"]["equivalent"]) for r in records),
                         "n_mq": sum(r["nsp"]["n_mq"] for r in records),
                         "time_s": sum(r["nsp"]["time_s"] for r in records),
                         "classic_equivalent": sum(bool(r["classic"]["equivalent"]) for r in records)},
                outputs=[args.out])


if __name__ == "__main__":
    main()
