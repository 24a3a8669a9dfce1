"""Calibration pilot: one base model of one seed at a setting, judged on the validation split only (prints one line).

    python bench/tp_spikformer_calibration.py --seed 0 --set train.epochs=20 --set data.copies=3

The default profile's params (tp_spikformer.data, .model, .train) with each --set KEY=VALUE (a YAML value) applied;
the data built and the model trained as the pipeline's data and train_base steps do, one torch thread. Prints the
setting, the seed, the dense validation accuracy (the K0 gate's metric on validation: PAPER.md, Calibration) and
the seconds of data and training. The test images are dropped unread: calibration never looks at a claim metric.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def override(p: dict, assignment: str) -> dict:
    """`p` with the dotted KEY set to the YAML VALUE of `assignment` (KEY=VALUE), e.g. train.epochs=20."""
    key, value = assignment.split("=", 1)
    *path, last = key.split(".")
    node = p
    for part in path:
        node = node[part]
    if last not in node:
        raise SystemExit(f"--set {assignment}: tp_spikformer has no knob {key}")
    node[last] = yaml.safe_load(value)
    return p


def main() -> None:
    import numpy as np

    from workflow.core.params import load
    from workflow.core.step import one_thread, seed_everything
    from workflow.papers.tp_spikformer import data as D
    from workflow.papers.tp_spikformer import methods as M
    from workflow.papers.tp_spikformer import plan

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    one_thread()
    p = load("default")["tp_spikformer"]
    for assignment in args.set:
        p = override(p, assignment)
    plan.check(p)
    start = time.perf_counter()
    d = D.image_set(p["data"], plan.raw_files(p["data"]), np.random.default_rng(p["data"]["seed"]))
    del d["x_test"], d["y_test"]
    data_s = time.perf_counter() - start
    seed_everything(args.seed)
    model = M.build(p["model"] | p["train"], int(d["y_train"].max()) + 1)
    start = time.perf_counter()
    M.train(model, d["x_train"], d["y_train"], p["model"] | p["train"], args.seed, log=lambda *_: None)
    train_s = time.perf_counter() - start
    acc = M.dense_accuracy(model, d["x_val"], d["y_val"])
    print(json.dumps({"set": args.set, "seed": args.seed, "val_acc": round(acc, 4), "n_train": len(d["y_train"]),
                      "data_s": round(data_s, 1), "train_s": round(train_s, 1)}), flush=True)


if __name__ == "__main__":
    main()
