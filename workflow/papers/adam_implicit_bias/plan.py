"""The jobs of this paper, as pure functions of its params section (params.yaml: adam_implicit_bias).

The rule file builds its job lists from these, and the evaluate step finds the same files through them: no
command line grows with the number of runs (a list of 10,000 paths would exceed the kernel's argument limit).
"""
from __future__ import annotations

OUT = "results/adam_implicit_bias"
# Every batch-sweep data set also runs these, so that each batch size has its b = 1 and full-batch ends (C5).
SWEEP_ENDS = ["inc_adam", "det_adam", "inc_signum", "det_signum", "inc_gd", "det_gd"]


def runs(p: dict) -> list[tuple[str, str]]:
    """(data set, algorithm) pairs: GR and Gauss families, plus the batch sweep on the first GR sets."""
    n, plan = p["datasets"], p["plan"]
    pairs = {(f"gr{k}", a) for k in range(n["gr"]) for a in plan["gr"]}
    pairs |= {(f"gauss{k}", a) for k in range(n["gauss"]) for a in plan["gauss"]}
    pairs |= {(f"gr{k}", a) for k in range(min(n["batch_sweep"], n["gr"])) for a in plan["batch_sweep"] + SWEEP_ENDS}
    return sorted(pairs)


def run_paths(p: dict) -> list[str]:
    return [f"{OUT}/train/{dataset}/{algo}.npz" for dataset, algo in runs(p)]
