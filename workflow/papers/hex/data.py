"""The fixed problems: test and validation chains of min_ops..max_ops operations, and the held-out `long` chains of
long_ops operations, longer than any test chain (the training stream is drawn on the fly from each model's seed and
skips every prompt listed here)."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import write_json
from workflow.core.step import Step
from workflow.lib import arith

READS = ("hex.data",)


def problem_sets(data: dict) -> dict:
    test = arith.problems(data["test_seed"], data["test"], data["min_ops"], data["max_ops"])
    validation = arith.problems(data["validation_seed"], data["validation"], data["min_ops"], data["max_ops"],
                                exclude=frozenset(p for p, _ in test))
    long = arith.problems(data["long_seed"], data["long"], data["long_ops"], data["long_ops"],
                          exclude=frozenset(p for p, _ in test + validation))
    return {"test": test, "validation": validation, "long": long}


def main(argv=None):
    step = Step("hex", "data", __doc__)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    sets = problem_sets(p)
    write_json(args.out, sets)
    step.finish(metrics={f"{name}_problems": len(v) for name, v in sets.items()}, outputs=[args.out])


if __name__ == "__main__":
    main()
