"""E6 (qualitative): sparsity bias of gradient descent from a small initialisation on teacher data: how often does
an MLP end with a near-dead neuron, and a CNN with a near-zero boundary filter entry?"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import nets, points, training
from .points import arch_spec

READS = ("neuromanifolds.sparsity",)


def trial(spec: dict, c, p: dict, seed: int, index: int) -> dict:
    """One GD run of `spec` on data of a dense random teacher of the same architecture (generic: not sparse)."""
    arch = points.make_arch(spec)
    rng = np.random.default_rng([seed, index, 0 if arch.kind == "mlp" else 1])
    X = points.sample_inputs(p["n_points"], arch.widths[0], rng)
    teacher = points.init_params(arch, rng)
    rep = training.sparsity_bias_trial(arch, c, X, teacher, seed=seed + index, init_scale=p["init_scale"], lr=p["lr"],
                                      n_steps=p["steps"], rel_tol=p["rel_tol"])
    return {"seed": index, "kind": arch.kind, "arch": arch.label()} | rep


def run(p: dict, log=print) -> pd.DataFrame:
    specs = [arch_spec(p["mlp"]), arch_spec(p["cnn"])]
    rows = []
    for s in range(p["seeds"]):
        c = nets.activation_coeffs(p["degree"], "generic", np.random.default_rng([p["seed"], s]))  # same sigma for both
        rows += [trial(spec, c, p, p["seed"], s) for spec in specs]
        if (s + 1) % 5 == 0 or s + 1 == p["seeds"]:
            t = pd.DataFrame(rows)
            ok = t[~t.diverged.astype(bool)]
            log(f"{s + 1}/{p['seeds']} seeds: sparse fraction (non-diverged) "
                + ", ".join(f"{k} {g['sparse'].mean():.2f} of {len(g)}" for k, g in ok.groupby("kind")))
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("neuromanifolds", "sparsity", __doc__)
    step.parser.add_argument("--out", type=Path, required=True, help=".csv, one row per seed and architecture")
    args, p = step.start(argv)
    table = run(p, log=step.log)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    ok = table[~table.diverged.astype(bool)]
    step.finish(metrics={f"sparse_fraction_{k}": g["sparse"].mean() for k, g in ok.groupby("kind")}
                | {f"diverged_{k}": g.diverged.sum() for k, g in table.groupby("kind")}, outputs=[args.out])


if __name__ == "__main__":
    main()
