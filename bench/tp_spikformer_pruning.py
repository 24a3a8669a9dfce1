"""Benchmark: the pruned spiking transformer against the unpruned one, in one run (prints figures; not a test).

    python bench/tp_spikformer_pruning.py                       # the base model of seed 0 from a default run
    python bench/tp_spikformer_pruning.py --base PATH --data PATH

For each token budget of params.yaml (tp_spikformer.prune), IR pruning with early stopping against the dense model on
the same test images, one torch thread: images per second (median of 3 passes) and SOPs per image (counted from the
spikes each layer receives), each as a ratio to the dense model's.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPEAT = 3


def images_per_second(forward, x, batch: int = 250) -> float:
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        for i in range(0, len(x), batch):
            forward(x[i:i + batch])
        times.append(time.perf_counter() - start)
    return len(x) / statistics.median(times)


def main() -> None:
    import torch

    from workflow.core.io import load_state, read_npz
    from workflow.core.params import load, sections
    from workflow.lib.spiking import SOPCounter
    from workflow.papers.tp_spikformer import methods as M
    from workflow.papers.tp_spikformer import plan

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, default=ROOT / plan.base_path(0))
    parser.add_argument("--data", type=Path, default=ROOT / plan.OUT / "data" / "images.npz")
    parser.add_argument("--images", type=int, default=500)
    args = parser.parse_args()
    for path in (args.base, args.data):
        if not path.exists():
            raise SystemExit(f"{path} is missing. Fix: `snakemake --cores 2 tp_spikformer` first (default profile).")
    torch.set_num_threads(1)
    p = sections(load("default"), ["tp_spikformer.model", "tp_spikformer.prune"])
    ckpt = load_state(args.base)
    model = M.build(p["tp_spikformer.model"], ckpt["meta"]["classes"])
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    x = torch.from_numpy(read_npz(args.data)["x_test"][:args.images])
    prune = p["tp_spikformer.prune"]

    def measure(forward):
        with torch.no_grad():
            speed = images_per_second(forward, x)
            with SOPCounter(model) as counter:
                forward(x[:100])
        return speed, counter.sops / 100

    dense_speed, dense_sops = measure(model)
    print(f"dense: {dense_speed:.0f} images/s, {dense_sops / 1e3:.0f} k SOPs/image ({len(x)} test images, 1 thread)")
    print(f"{'budget':8s} {'keep':12s} {'token-blocks':>12s} {'images/s ratio':>15s} {'SOPs ratio':>11s}")
    for name in prune["sweep"]:
        keep = prune["budgets"][name]
        speed, sops = measure(lambda xb, keep=keep: M.pruned_forward(model, xb, keep, "ir", "early_stop"))
        tokens = (x.shape[-1] // 2) ** 2
        print(f"{name:8s} {'-'.join(map(str, keep)):12s} {M.cost(keep, tokens):12.3f} {speed / dense_speed:15.2f} "
              f"{sops / dense_sops:11.3f}")


if __name__ == "__main__":
    main()
