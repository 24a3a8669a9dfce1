"""C1, C4: L*_nsp and classic L* (binary labels) with the exact DFA of every language as the teacher, one seed per
job, all within the same query budget; beside them the controls: L*_nsp on a teacher whose continuation bits are
shuffled (C4) and on the exact teacher of a perturbed DFA (C1). One row per language: target size, what each
learner returned, its queries and its samples."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step, seed_everything

from . import methods

READS = ("lnsp.exact", "lnsp.learners")

KEYS = ("n_states", "equivalent", "same_size", "converged", "n_mq", "n_gen", "n_samples", "samples_to_last_cex",
        "rounds", "time_s")
# column prefix -> the NSP teacher L*_nsp learns from (methods.exact_teacher)
NSP_RUNS = {"nsp": "exact", "shuf": "shuffled", "pert": "perturbed"}


def exact_row(name: str, seed: int, p: dict) -> dict:
    """One language: L*_nsp on the exact teacher and on the two control teachers, beside classic L*; every run
    compared with the target of ``name`` and bounded by the same budget."""
    common = methods.learner_settings(name, p)
    row = {"language": name, "family": methods.LANGUAGES[name]["family"], "seed": seed}
    for prefix, kind in NSP_RUNS.items():
        res = methods.run_exact(name, seed, teacher=methods.exact_teacher(name, kind, seed), **common)
        row |= {f"{prefix}_{k}": res[k] for k in KEYS} | {f"{prefix}_hyp_sizes": " ".join(map(str, res["hyp_sizes"]))}
        row["target_states"] = res["target_states"]
    cls = methods.run_classic(methods.exact_teacher(name), name, seed, noise=p["noise"], **common)
    row |= {f"classic_{k}": cls[k] for k in KEYS} | {"classic_frac_negative": cls["frac_negative"],
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
                 f"last cex after {r['classic_samples_to_last_cex']} samples, {r['classic_time_s']:.2f}s | "
                 f"shuffled bits {r['shuf_n_states']} states, exact={r['shuf_equivalent']}, converged={r['shuf_converged']}, "
                 f"{r['shuf_samples_to_last_cex']} samples | perturbed teacher exact={r['pert_equivalent']}")
        rows.append(r)
    table = pd.DataFrame(rows)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics={"nsp_exact": table.nsp_equivalent.mean(), "classic_exact": table.classic_equivalent.mean(),
                         "shuf_exact": table.shuf_equivalent.mean(), "nsp_seconds": table.nsp_time_s.sum()},
                outputs=[args.out])


if __name__ == "__main__":
    main()
