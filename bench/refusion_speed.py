"""Benchmark: ReFusion's wall time per token against the autoregressive and masked-diffusion models, in one run (prints
figures; not a test).

    python bench/refusion_speed.py            # the models of seed 0 from a default run (results/refusion/models)
    python bench/refusion_speed.py --items 100 --seed 1

The three trained models decode the first `items` test problems of each task one at a time, one torch thread, with
the spec's default ReFusion setting (slot 4, 2 serial blocks, tau_slot 0.9, tau_tok 0.6) and, for the control, the
same decoding without the KV cache. Milliseconds per generated token are the median of 3 runs (the paper's step
does the same in `speed_rows`); ratios are to ReFusion's.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    import torch

    from workflow.core.io import load_state, read_json
    from workflow.core.params import load
    from workflow.papers.refusion import decode, plan
    from workflow.papers.refusion import methods as M

    torch.set_num_threads(1)
    p = load("default", ROOT)["refusion"]
    flat = p["data"] | p["model"] | p["decode"] | {"speed_items": args.items, "speed_repeats": 3}
    vocab, models = M.vocab(), {}
    for kind in M.MODELS:
        path = ROOT / plan.model_path(kind, args.seed)
        if not path.exists():
            raise SystemExit(f"{path} is missing: run `snakemake --cores 2 refusion` (the default profile) first")
        models[kind] = M.build(flat, kind, len(vocab))
        models[kind].load_state_dict(load_state(path)["state_dict"])
        models[kind].eval()
    sets = read_json(ROOT / plan.OUT / "data" / "problems.json")
    with torch.no_grad():
        rows = decode.speed_rows(models, sets, flat, M.Setting(), vocab)
    per = {}
    for r in rows:
        g, s = per.get(r["decoder"], (0, 0.0))
        per[r["decoder"]] = (g + r["generated"], s + r["seconds"])
    ms = {d: 1000 * s / g for d, (g, s) in per.items()}
    print(f"seed {args.seed}, {args.items} problems per task, batch 1, one thread")
    print(f"{'decoder':>20} {'ms/token':>9} {'vs ReFusion':>12}")
    for d, v in ms.items():
        print(f"{d:>20} {v:>9.2f} {v / ms['refusion']:>11.2f}x")


if __name__ == "__main__":
    main()
