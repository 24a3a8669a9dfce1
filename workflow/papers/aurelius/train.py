"""One run (training strategy, seed): a TTA model (a caption-conditioned rectified flow over log-mels) trained the
strategy's way, and one sample (log-mel) generated per test caption and per validation caption; the evaluate step
scores them (a better evaluator re-scores, never re-trains).

  zs               general pairs only (single events, plain captions), then asked relation captions zero-shot
  ft_k             the zs model fine-tuned on the first k thirds of the relation pairs (the paper's 100/200/300 h)
  fs_k             the same network trained from scratch on those pairs
  controls         zs_scrambled (general captions permuted among the pairs: no text-audio knowledge to transfer),
                   ft_scrambled_k (fine-tuned from zs_scrambled), ft_shuffled_k (relation captions permuted)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workflow.core.io import load_state, read_json, read_npz, save_state, write_npz
from workflow.core.step import Step, seed_everything

from . import models as M
from . import plan as P

READS = ("aurelius.train",)


def training_data(run: str, pairs: dict, mels: dict, rng: np.random.Generator):
    """(captions, log-mels) the run trains on; a control's captions permuted among its pairs."""
    strategy, thirds = P.parse(run)
    split = "general" if strategy.startswith("zs") else "train"
    n = len(pairs[split]) if thirds == 0 else len(pairs[split]) * thirds // 3
    texts, target = [m["text"] for m in pairs[split][:n]], mels[split][:n]
    if strategy in ("zs_scrambled", "ft_shuffled"):
        texts = [texts[i] for i in rng.permutation(n)]
    return texts, target


def epochs_of(run: str, epochs: dict) -> int:
    strategy = P.parse(run)[0]
    return epochs["zs" if strategy.startswith("zs") else "fs" if strategy == "fs" else "ft"]


def main(argv=None):
    step = Step("aurelius", "train", __doc__)
    for name in ("pairs", "mels", "out"):
        step.parser.add_argument(f"--{name}", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, nargs="*", default=[],
                             help="the zero-shot model a fine-tuned run starts from (none: from scratch)")
    step.parser.add_argument("--model", type=Path, help="where to keep this run's model (zero-shot runs)")
    step.parser.add_argument("--run", required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    rng = np.random.default_rng(args.seed)
    pairs = read_json(args.pairs)
    mels = {k: v.astype(np.float32) for k, v in read_npz(args.mels).items()}
    vocab = {w: i + 1 for i, w in enumerate(pairs["vocab"])}  # 0 pads
    both = np.concatenate([mels["general"], mels["train"]])
    mean, std = both.mean((0, 1)), both.std((0, 1)) + 1e-6  # one normalisation for every run
    encode = lambda texts: torch.tensor([M.tokens(t, vocab) for t in texts])  # noqa: E731

    latent = M.PatchPCA.fit((both - mean) / std, p["patch"], p["latent"])  # shared by every run, like the norm
    texts, target = training_data(args.run, pairs, mels, rng)
    model = M.TTA(len(vocab) + 2, p["d"], p["layers"], p["heads"], mels["test"].shape[1] // p["patch"],
                  p["latent"])  # + PAD, NULL
    if args.base:
        model.load_state_dict(load_state(args.base[0])["state_dict"])
    lr = p["lr_ft"] if args.base else p["lr"]
    step.log(f"{args.run}: {len(texts)} pairs, {epochs_of(args.run, p['epochs'])} epochs, lr {lr}, "
             f"{sum(q.numel() for q in model.parameters())} parameters")
    M.fit_tta(model, encode(texts), torch.from_numpy(latent.encode((target - mean) / std)),
              epochs_of(args.run, p["epochs"]), p["batch"], lr, p["caption_drop"], rng, step.curve)

    def sample(split: str) -> np.ndarray:  # one log-mel per caption of the split, from noise seeded by the run's seed
        words = encode([m["text"] for m in pairs[split]])
        z = M.generate(model, words, p["sample_steps"], p["guidance"], args.seed).numpy()
        return latent.decode(z) * std + mean

    generated, generated_val = sample("test"), sample("val")
    l1 = float(np.abs(generated - mels["test"]).mean())
    step.log(f"test L1 to the reference log-mel {l1:.3f} (a sample, not the mean: L1 is no target here)")
    if args.model:
        save_state(args.model, model.state_dict(), {"run": args.run, "seed": args.seed})
    write_npz(args.out, generated=generated.astype(np.float16), generated_val=generated_val.astype(np.float16),
              train_pairs=len(texts))
    step.finish(metrics={"test_l1": l1, "train_pairs": len(texts)},
                outputs=[args.out] + ([args.model] if args.model else []))


if __name__ == "__main__":
    main()
