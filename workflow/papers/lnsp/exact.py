"""C1, C4: L*_nsp and classic L* (aalpy, binary labels) with the exact DFA of every language as the teacher, one
seed per job. One row per language: target size, what each learner returned, its queries and its samples."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step, seed_everything

from . import methods

KEYS = ("n_states", "equivalent", "same_size", "converged", "n_mq", "n_samples", "samples_to_last_cex", "rounds",
        "time_s")


def exact_row(name: str, seed: int, p: dict) -> dict:
    """One language: L*_nsp (exact NSP teacher) beside classic L* (binary labels, ``classic_rounds`` EQ rounds)."""
    nsp = methods.run_exact(name, seed, eps=p["eps"], delta=p["delta"], backend=p["backend"])
    teacher = methods.DFATeacher(methods.get_language(name), **methods.LANGUAGES[name]["sampler"])
    cls = methods.run_classic(teacher, name, seed, eps=p["eps"], delta=p["delta"], max_rounds=p["classic_rounds"],
                              noise=p["noise"])
    row = {"language": name, "family": methods.LANGUAGES[name]["family"], "seed": seed,
           "target_states": nsp["target_states"]}
    row |= {f"nsp_{k}": nsp[k] for k in KEYS} | {"nsp_hyp_sizes": " ".join(map(str, nsp["hyp_sizes"]))}
    row |= {f"classic_{k}": cls[k] for k in KEYS}
    row |= {"classic_frac_negative": cls["frac_negative"], "classic_budget_stop": cls["budget_stop"],
            "classic_hyp_sizes": " ".join(map(str, cls["hyp_sizes"]))}
    return row


def main(argv=None):
    step = Step("lnsp", "exact", __doc__)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per language")
    args, p = step.start(argv)
    seed_everything(args.seed)
    rows = []
    for name in p["languages"]:
        r = exact_row(name, args.seed, p)
        step.log(f"{name}: target {r['target_states']} | L*_nsp {r['nsp_n_states']} states, exact={r['nsp_equivalent']}, "
                 f"{r['nsp_n_mq']} MQs, last cex after {r['nsp_samples_to_last_cex']} samples, {r['nsp_time_s']:.2f}s | "
                 f"classic {r['classic_n_states']} states, exact={r['classic_equivalent']}, converged={r['classic_converged']}, "
                 f"last cex after {r['classic_samples_to_last_cex']} samples")
        rows.append(r)
    table = pd.DataFrame(rows)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics={"nsp_exact": table.nsp_equivalent.mean(), "classic_exact": table.classic_equivalent.mean(),
                         "nsp_seconds": table.nsp_time_s.sum()}, outputs=[args.out])


if __name__ == "__main__":
    main()
