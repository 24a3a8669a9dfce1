"""Benchmark: the tiny LMs' training step on one core, in tokens per second (prints figures; not a test).

    python bench/tinylm_train_step.py [--steps 30] [--batch 64]

One AdamW step (forward, backward, update) of the shared tiny transformer (workflow/lib/tinylm.py, d = 64, 3 layers,
4 heads, one torch thread) on the arithmetic chains (workflow/lib/arith.py: a 24-token prompt and a 32-token answer,
56 tokens a row), for each objective the language-model papers train:
  * ``next-token``      the ARM (causal), every answer token scored (refusion's ARM);
  * ``next-token/eos``  the ARM scored up to each row's first <eos>, fed only up to the batch's last scored token (hex's
                        ARM initialisation, code_reasoning);
  * ``masked-diffusion`` the MDM (bidirectional, LLaDA's loss: hex, refusion's MDM).
Tokens per second = batch x 56 / the median step time over `steps` steps after 3 warm-up steps. A paper's training
cost on one core is about steps x batch x 56 / this figure (the pilots' one-core timings in each PAPER.md's
calibration table were taken on a machine shared with other jobs, so they run slower than this).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    import torch

    from workflow.lib import arith, diffusion
    from workflow.lib.tinylm import Config, TinyLM, next_token_loss

    torch.set_num_threads(1)
    torch.manual_seed(0)
    vocab = arith.vocab()
    stream = arith.Stream(0, set(), lambda rng: arith.problem(rng), vocab)
    noise = torch.Generator().manual_seed(0)
    objectives = {
        "next-token": (True, lambda m, p, r: next_token_loss(m, p, r)),
        "next-token/eos": (True, lambda m, p, r: next_token_loss(m, p, r, eos=vocab.eos)),
        "masked-diffusion": (False, lambda m, p, r: diffusion.masked_diffusion_loss(m, p, r, vocab.mask, noise)),
    }
    tokens = args.batch * (arith.PROMPT_LEN + arith.GEN_LEN)
    print(f"tiny LM d=64, 3 layers, 4 heads; batch {args.batch} x {arith.PROMPT_LEN + arith.GEN_LEN} tokens; 1 thread")
    print(f"{'objective':>17} {'s/step':>7} {'tokens/s':>9}")
    for name, (causal, loss_of) in objectives.items():
        model = TinyLM(Config(vocab=len(vocab), d=64, layers=3, heads=4, causal=causal))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        times = []
        for i in range(args.steps + 3):
            prompt, response = stream.batch(args.batch)
            start = time.perf_counter()
            loss = loss_of(model, prompt, response)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if i >= 3:
                times.append(time.perf_counter() - start)
        step = statistics.median(times)
        print(f"{name:>17} {step:>7.3f} {tokens / step:>9.0f}")


if __name__ == "__main__":
    main()
