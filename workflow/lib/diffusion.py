"""Masked-diffusion language modelling (LLaDA-style), shared by the diffusion-LM papers (hex; planned: refusion).

Training (LLaDA SFT): per sequence t ~ U(eps, 1), every response token masked with probability t (the prompt never),
loss = -(1 / (B G)) sum_b sum_{i masked} log p(x0_i | prompt, x_t) / t. The response includes its <eos> padding,
so the model learns to end answers, which is what confidence decoding can collapse into.

Sampling (LLaDA's `generate`): the response starts fully masked and is decoded in semi-autoregressive blocks, left
to right; a block of b tokens gets steps * b / G denoising steps (at least one) and commits an even share of its
tokens at each. At a step the model predicts every masked token (argmax, or Gumbel-max at a temperature) and the
masked positions of the current block with the highest confidence are committed:
  * ``low_confidence``: p of the predicted token (LLaDA's low-confidence remasking);
  * ``margin``: p1 - p2 of the two most likely tokens (top-k margin);
  * ``random``: a uniform random number (random unmasking).
One block of G tokens is the non-semi-AR decoder.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

REMASKING = ("low_confidence", "margin", "random")


def masked_diffusion_loss(model, prompt: torch.Tensor, response: torch.Tensor, mask_id: int,
                          generator: torch.Generator, eps: float = 1e-3) -> torch.Tensor:
    """LLaDA's SFT loss on (B, P) prompts and (B, G) responses."""
    B, G = response.shape
    t = eps + (1 - eps) * torch.rand(B, 1, generator=generator)
    masked = torch.rand(B, G, generator=generator) < t
    noisy = torch.where(masked, torch.full_like(response, mask_id), response)
    logits = model(torch.cat([prompt, noisy], dim=1))[:, prompt.shape[1]:]
    nll = F.cross_entropy(logits.reshape(B * G, -1), response.reshape(-1), reduction="none").view(B, G)
    return (nll * masked / t).sum() / (B * G)


def gumbel_max(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> torch.Tensor:
    """argmax of the logits, or at temperature > 0 a sample by LLaDA's float64 Gumbel-max form
    exp(logits) / (-log u)^temperature (argmax of it = argmax of logits / temperature + Gumbel noise)."""
    if temperature == 0:
        return logits.argmax(-1)
    u = torch.rand(logits.shape, generator=generator, dtype=torch.float64).clamp_min(1e-300)
    return (logits.double().exp() / (-torch.log(u)) ** temperature).argmax(-1)


def transfer_counts(n: int, steps: int) -> list[int]:
    """How many of n masked tokens a block commits at each of its steps: an even share, the remainder first."""
    base, extra = divmod(n, steps)
    return [base + (i < extra) for i in range(steps)]


@dataclass
class Decoded:
    tokens: torch.Tensor     # (B, G) the response
    step_of: torch.Tensor    # (B, G) the denoising step (0-based) at which each position was committed
    nll: torch.Tensor        # (B,) mean -log p of the committed tokens at their commit (untempered model probs)
    forwards: int            # model calls


@torch.no_grad()
def sample(model, prompt: torch.Tensor, gen_len: int, steps: int, block: int, mask_id: int,
           remasking: str = "low_confidence", temperature: float = 0.0,
           generator: torch.Generator | None = None) -> Decoded:
    """Decode (B, P) prompts into gen_len tokens with the block schedule; see the module docstring."""
    if remasking not in REMASKING:
        raise ValueError(f"remasking '{remasking}' is not one of {REMASKING}")
    if gen_len % block:
        raise ValueError(f"block {block} does not divide the generation length {gen_len}")
    B, P = prompt.shape
    x = torch.cat([prompt, torch.full((B, gen_len), mask_id, dtype=prompt.dtype)], dim=1)
    step_of = torch.full((B, gen_len), -1, dtype=torch.long)
    logp_sum = torch.zeros(B, dtype=torch.float64)
    blocks = gen_len // block
    per_block = max(1, steps * block // gen_len)
    rows = torch.arange(B)[:, None]
    step = 0
    for nb in range(blocks):
        lo, hi = P + nb * block, P + (nb + 1) * block
        for count in transfer_counts(block, per_block):
            if count == 0:
                step += 1
                continue
            logits = model(x)
            probs = logits.float().softmax(-1)
            x0 = gumbel_max(logits, temperature, generator)
            p_x0 = probs.gather(-1, x0[..., None])[..., 0]
            if remasking == "low_confidence":
                confidence = p_x0
            elif remasking == "margin":
                top2 = probs.topk(2, dim=-1).values
                confidence = top2[..., 0] - top2[..., 1]
            else:
                confidence = torch.rand(x.shape, generator=generator)
            still_masked = x == mask_id
            in_block = torch.zeros_like(still_masked)
            in_block[:, lo:hi] = True
            confidence = torch.where(still_masked & in_block, confidence, torch.tensor(-float("inf")))
            chosen = confidence.topk(count, dim=-1).indices  # (B, count): masked positions of the block
            x[rows, chosen] = x0[rows, chosen]
            step_of[rows, chosen - P] = step
            logp_sum += torch.log(p_x0[rows, chosen].double().clamp_min(1e-30)).sum(-1)
            step += 1
    return Decoded(tokens=x[:, P:], step_of=step_of, nll=-logp_sum / gen_len, forwards=model_calls(blocks, per_block, block))


def model_calls(blocks: int, per_block: int, block: int) -> int:
    return blocks * sum(c > 0 for c in transfer_counts(block, per_block))
