"""The fixed test and validation problems of both tasks (training problems are drawn on the fly from each model's
seed and skip every prompt listed here)."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import write_json
from workflow.core.step import Step

from . import tasks as M

READS = ("refusion.data",)


def problem_sets(p: dict) -> dict:
    sets = {}
    for task in M.TASKS:
        test = M.problems(task, p["test_seed"], p["test"], p)
        validation = M.problems(task, p["validation_seed"], p["validation"], p, exclude=frozenset(q for q, _ in test))
        sets[task] = {"test": test, "validation": validation}
    return sets


def main(argv=None):
    step = Step("refusion", "data", __doc__)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    sets = problem_sets(p)
    write_json(args.out, sets)
    step.finish(metrics={f"{task}_{split}": len(v) for task, s in sets.items() for split, v in s.items()},
                outputs=[args.out])


if __name__ == "__main__":
    main()
