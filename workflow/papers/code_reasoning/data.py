"""The fixed sets: finetuning programs, the priming set and the test items of the three tasks (disjoint programs),
plus each variant's density rho and the share of Python renderings that run to their answer."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import write_json
from workflow.core.step import Step

from . import sets as S
from . import world as W

READS = ("code_reasoning.data",)


def main(argv=None):
    step = Step("code_reasoning", "data", __doc__)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    data = S.build(p)
    rho = S.density(data["train"])
    runs = sum(W.py_executes(prog) for prog in data["train"]) / len(data["train"])
    write_json(args.out, data | {"density": rho, "py_executes": runs})
    step.finish(metrics={"train_programs": len(data["train"]), "priming_items": len(S.every_item(data["priming"])),
                         "py_executes": runs, **{f"rho_{v}": r for v, r in rho.items()}}, outputs=[args.out])


if __name__ == "__main__":
    main()
