"""The training-free pruning sweep of one seed's frozen base model: every (criterion, mode) the plan names at every
token budget, plus the dense model, on the same test images: accuracy, SOPs per image (counted from the spikes each
layer receives, on the first `sop_images` test images), wall time per image, and the state-dict hash before and after
(nothing is trained)."""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from workflow.core.io import load_state, read_npz, write_text
from workflow.core.step import Step
from workflow.lib.spiking import SOPCounter
from workflow.lib.training import state_hash

from . import methods as M

READS = ("tp_spikformer.model", "tp_spikformer.prune")

ENERGY_PJ_PER_SOP = 0.9  # 45 nm accumulate, the SNN papers' convention (spec 6.3)


def evaluate(model, x, y, forward, sop_images: int, batch: int = 250) -> dict:
    """Accuracy and seconds per image of `forward(images) -> logits` over (x, y); SOPs per image on the first images."""
    start, correct = time.perf_counter(), 0
    for i in range(0, len(x), batch):
        correct += int((forward(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum())
    seconds = (time.perf_counter() - start) / len(x)
    with SOPCounter(model) as counter:
        forward(x[:sop_images])
    return {"accuracy": correct / len(x), "sops": counter.sops / sop_images, "macs": counter.macs / sop_images,
            "seconds_per_image": seconds}


def sweep(model, x, y, p: dict, seed: int, log=print) -> list[dict]:
    model.eval()
    tokens = (x.shape[-1] // 2) ** 2
    with torch.no_grad():
        dense = evaluate(model, x, y, model, p["sop_images"])
    rows = [{"criterion": "dense", "mode": "dense", "budget": "dense", "keep": "", "cost": 1.0, **dense}]
    log(f"dense: {dense}")
    for criterion, mode in (tuple(cm.split("/")) for cm in p["methods"]):
        for name in p["sweep"]:
            keep = p["budgets"][name]
            gen = torch.Generator().manual_seed(1000 + seed)  # the random criterion's scores, the same per budget
            res = evaluate(model, x, y, lambda xb: M.pruned_forward(model, xb, keep, criterion, mode, gen), p["sop_images"])
            rows.append({"criterion": criterion, "mode": mode, "budget": name, "keep": "-".join(map(str, keep)),
                         "cost": M.cost(keep, tokens), **res})
            log(f"{criterion}/{mode} {name}: acc={res['accuracy']:.4f} sops={res['sops']:.3g}")
    return rows


def main(argv=None):
    step = Step("tp_spikformer", "prune", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    d = read_npz(args.data)
    ckpt = load_state(args.base)
    model = M.build(p, ckpt["meta"]["classes"])
    model.load_state_dict(ckpt["state_dict"])
    before = state_hash(model)
    x, y = torch.from_numpy(d["x_test"]), torch.from_numpy(d["y_test"])
    rows = sweep(model, x, y, p, args.seed, step.log)
    unchanged = float(state_hash(model) == before)
    table = pd.DataFrame(rows).assign(seed=args.seed, state_unchanged=unchanged,
                                      energy_uj=lambda t: t.sops * ENERGY_PJ_PER_SOP * 1e-6)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    step.finish(metrics={"dense_accuracy": rows[0]["accuracy"], "state_unchanged": unchanged}, outputs=[args.out])


if __name__ == "__main__":
    main()
