"""One image set, split into train / val / test: TexturedDigits-16 (split by original digit) or Fashion-16 (from
the catalog's Fashion-MNIST files). Each split: images (n, 3, 16, 16) in [0, 1], the probe's questions (class and
two yes/no) and the nuisance bins (digits: hue bin and texture orientation; the evaluator's extra targets); the
digits also carry their stroke masks and hue_spread, with which the teacher re-renders them every epoch."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_npz
from workflow.core.step import Step

from . import world

READS = ("semhitok.data",)


def main(argv=None):
    step = Step("semhitok", "data", __doc__)
    step.parser.add_argument("dataset", choices=("digits", "fashion"))
    step.parser.add_argument("--raw", type=Path, nargs="*", default=[])
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    rng = np.random.default_rng(p["seed"])
    if args.dataset == "digits":
        splits = world.textured_digits(p["n_aug"], p["val_frac"], p["test_frac"], p["hue_spread"], rng)
    else:
        splits = world.fashion16(args.raw, p["fashion_train_per_class"], p["fashion_test_per_class"],
                                 p["val_frac"], rng)
    arrays = {}
    for split, d in splits.items():
        arrays |= {f"x_{split}": d["x"], f"q_{split}": world.questions(args.dataset, d["y"]),
                   f"nuisance_{split}": d["nuisance"]}
        if "mask" in d:
            arrays[f"mask_{split}"] = d["mask"]
    if args.dataset == "digits":
        arrays["hue_spread"] = np.float64(p["hue_spread"])
    write_npz(args.out, **arrays)
    step.finish(metrics={f"n_{s}": len(d["y"]) for s, d in splits.items()}, outputs=[args.out])


if __name__ == "__main__":
    main()
