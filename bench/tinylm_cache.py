"""Benchmark: KV-cached decoding against decoding without the cache (prints figures; not a test).

    python bench/tinylm_cache.py [--tokens 64] [--prompt 24]

The shared tiny causal LM (workflow/lib/tinylm.py, d = 64, 3 layers, 4 heads, untrained: the cost does not depend
on the weights) decodes `tokens` tokens greedily after a `prompt`-token prompt, one torch thread, at batch 1 and 32:
with the cache (the prompt once, then one token per forward) and without (the whole prefix again at every token).
Tokens per second are the median of 3 runs; the ratio is cached / uncached, measured in the same run. Both produce the
same tokens (checked).
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


def decode(model, prompt, tokens: int, cached: bool):
    import torch

    from workflow.lib.tinylm import KVCache

    with torch.no_grad():
        out = prompt
        cache = KVCache(model.config.layers) if cached else None
        logits = model(prompt, cache=cache)
        for _ in range(tokens):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
            logits = model(nxt, cache=cache) if cached else model(out)
    return out


def tokens_per_second(model, prompt, tokens: int, cached: bool) -> tuple[float, object]:
    times, out = [], None
    for _ in range(REPEAT):
        start = time.perf_counter()
        out = decode(model, prompt, tokens, cached)
        times.append(time.perf_counter() - start)
    return prompt.shape[0] * tokens / statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--prompt", type=int, default=24)
    args = parser.parse_args()
    import torch

    from workflow.lib.tinylm import Config, TinyLM

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = TinyLM(Config(vocab=32, d=64, layers=3, heads=4, causal=True)).eval()
    print(f"tiny causal LM, {args.prompt}-token prompt, {args.tokens} tokens decoded greedily, 1 thread")
    print(f"{'batch':>5} {'cached tok/s':>13} {'uncached tok/s':>15} {'ratio':>6}")
    for batch in (1, 32):
        prompt = torch.randint(0, 32, (batch, args.prompt))
        fast, a = tokens_per_second(model, prompt, args.tokens, cached=True)
        slow, b = tokens_per_second(model, prompt, args.tokens, cached=False)
        if not torch.equal(a, b):
            raise SystemExit("cached and uncached decoding gave different tokens")
        print(f"{batch:>5} {fast:>13.0f} {slow:>15.0f} {fast / slow:>5.2f}x")


if __name__ == "__main__":
    main()
