"""C2, C3, C5: extract a DFA from one Transformer teacher with L*_nsp (NSP labels, generative queries), mine the
words where it differs from the target, and run classic L* (binary labels, samples of the untruncated LM; the
same L* and query budget) beside it; C5's control mines the words of a perturbed target instead of the
extraction."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import load_state, read_json, write_json
from workflow.core.step import Step, seed_everything

from . import methods

KEYS = ("n_states", "target_states", "equivalent", "same_size", "converged", "n_mq", "n_gen", "n_samples",
        "samples_to_last_cex", "rounds", "time_s", "hyp_sizes", "distinguishing_word")


def extraction(teacher, name: str, seed: int, p: dict) -> dict:
    """L*_nsp + error mining, classic L* on the same teacher within the same budget, and the mining of a
    perturbed target (C5's control): plain JSON-able dict."""
    common = methods.learner_settings(name, p)
    ext = methods.extract(teacher, name, seed, eps=common["eps"], delta=common["delta"], caps=common["caps"],
                          n_mined=p["n_mined"])
    cls = methods.run_classic(teacher, name, seed, **common)
    mutant = methods.mutant_mining(teacher, name, seed, n_mined=p["n_mined"])
    return {"nsp": {k: ext[k] for k in KEYS} | {"dfa": ext["dfa"], "cex_kinds": ext["cex_kinds"]},
            "mined": ext["mined"],
            "classic": {k: cls[k] for k in KEYS} | {"frac_negative": cls["frac_negative"]},
            "mutant": mutant}


def main(argv=None):
    step = Step("lnsp", "extract", __doc__)
    step.parser.add_argument("--teacher", type=Path, required=True, help="train_teacher's checkpoint (.pt)")
    step.parser.add_argument("--summary", type=Path, required=True, help="train_teacher's .json (NSP accuracy)")
    step.parser.add_argument("--seed", type=int, required=True, help="the teacher's seed, also the learners' sampling seed")
    step.parser.add_argument("--out", type=Path, required=True, help=".json")
    args, p = step.start(argv)
    seed_everything(args.seed)
    ckpt, summary = load_state(args.teacher), read_json(args.summary)
    meta = ckpt["meta"]
    teacher = methods.load_teacher(meta["config"], ckpt["state_dict"], p_min=meta["p_min"])
    res = extraction(teacher, meta["language"], args.seed, p)
    nsp, cls, mined, mutant = res["nsp"], res["classic"], res["mined"], res["mutant"]
    step.log(f"{meta['language']} ({meta['variant']}, seed {args.seed}): L*_nsp {nsp['n_states']}/{nsp['target_states']} "
             f"states, exact={nsp['equivalent']}, converged={nsp['converged']}, {nsp['n_mq']} MQs, last cex after "
             f"{nsp['samples_to_last_cex']} samples, {nsp['time_s']:.2f}s; mined {len(mined['words'])} words, "
             f"{sum(mined['confirmed'])} confirmed teacher errors | classic {cls['n_states']} states, "
             f"exact={cls['equivalent']}, converged={cls['converged']}, {cls['time_s']:.2f}s | perturbed target: "
             f"{sum(mutant['mined']['confirmed'])}/{len(mutant['mined']['words'])} confirmed")
    write_json(args.out, {"language": meta["language"], "variant": meta["variant"], "seed": args.seed,
                          "teacher": summary, **res})
    step.finish(metrics={"equivalent": nsp["equivalent"], "n_states": nsp["n_states"], "n_mq": nsp["n_mq"],
                         "samples_to_last_cex": nsp["samples_to_last_cex"], "time_s": nsp["time_s"],
                         "classic_equivalent": cls["equivalent"], "heldout_string_acc": summary["heldout_string_acc"]},
                outputs=[args.out])


if __name__ == "__main__":
    main()
