"""TP-Spikformer: training-free token pruning of a spiking transformer (spec 6.3, after `MS_Block_Conv.forward` of the
official sdt_drop.py).

Base model (SDT-V1 style, trained once and then frozen): stem conv3x3(1->8)+BN+LIF, maxpool, conv3x3(8->C)+BN,
RPE (LIF -> conv3x3+BN, residual) -> N = (side / 2)^2 tokens of C channels; L blocks of spike-driven self-attention
{shortcut LIF; q, k, v = 1x1 conv+BN+LIF; kv = LIF_{v_th 0.5}(sum over tokens of k * v); out = BN(1x1 conv(q * kv))}
and an MLP {LIF -> 1x1 conv C->4C + BN -> LIF -> 1x1 conv 4C->C + BN}, both residual; head: token mean -> LIF ->
linear -> mean over T. LIF: spikingjelly's convention (tau 2, v += (x - v) / tau, v_th 1, hard reset), through
workflow/lib/spiking.py. Tokens are kept as (T, B, N, C): a 1x1 conv is a Linear over C, and every block's layers
act per token except the attention's sum over tokens, so a block run on a gathered subset of tokens is exactly the
block run on the k x k grid the official code gathers.

Pruning (training-free) at block l keeps k_l^2 of the N tokens; the rest skip the block (early stopping: they stay
in the residual stream, later blocks re-score them, the final pooling sees them) or are removed for good (`*_drop`:
later blocks and the pooling see only the kept tokens). Criteria, scored on the block's input x (T, B, N, C):
  ir         s^T + s^S: s^T = softmax_n(mean_t |xbar_{t+1,n} - xbar_{t,n}|), xbar = mean over channels;
             s^S = softmax_n(-cos(x~_n, m_n)), x~ = mean over time, m = conv2d(x~, 1_{CxCx3x3} / 9, pad 1) (the
             official kernel sums over all channels)
  temporal   s^T only;  spatial  s^S only;  magnitude  the token's L1 norm;  random  seeded random scores
  ir_inverted  -(s^T + s^S): the negative control, IR's ranking turned upside down
  ir_other_image  IR's score map of the next image in the batch (the batch rolled by one): the placebo of K1 and K2,
             the IR criterion made inert (its scores no longer of this image) with their spatial pattern kept
Mode `early_stop_other_image` (the placebo of K3): early stopping, but the tokens that skip a block carry the state of
the same positions of the next image in the batch: the tokens early stopping keeps are there (in later blocks' scores
and the pooling) but the information they keep is not this image's.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from workflow.lib.spiking import LIF, TimeDistributed

CRITERIA = ("ir", "temporal", "spatial", "magnitude", "random", "ir_inverted", "ir_other_image")
MODES = ("early_stop", "drop", "early_stop_other_image")


def lif(v_th: float = 1.0) -> LIF:
    return LIF.spikingjelly(tau=2.0, v_th=v_th)


class TokenLinear(nn.Module):
    """A 1x1 conv + BatchNorm on tokens (T, B, N, C_in) -> (T, B, N, C_out)."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.fc, self.bn = nn.Linear(c_in, c_out), nn.BatchNorm1d(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return self.bn(y.reshape(-1, y.shape[-1])).reshape(y.shape)


class Block(nn.Module):
    def __init__(self, c: int, mlp_ratio: int = 4):
        super().__init__()
        self.shortcut_lif, self.q_lif, self.k_lif, self.v_lif, self.kv_lif = lif(), lif(), lif(), lif(), lif(0.5)
        self.q, self.k, self.v, self.proj = (TokenLinear(c, c) for _ in range(4))
        self.mlp_lif1, self.mlp_lif2 = lif(), lif()
        self.mlp1, self.mlp2 = TokenLinear(c, mlp_ratio * c), TokenLinear(mlp_ratio * c, c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.shortcut_lif(x)
        q, k, v = self.q_lif(self.q(s)), self.k_lif(self.k(s)), self.v_lif(self.v(s))
        kv = self.kv_lif((k * v).sum(dim=2, keepdim=True))  # (T, B, 1, C): the sum over (kept) tokens
        x = x + self.proj(q * kv)
        return x + self.mlp2(self.mlp_lif2(self.mlp1(self.mlp_lif1(x))))


class SpikingTransformer(nn.Module):
    def __init__(self, channels: int, blocks: int, classes: int, steps: int):
        super().__init__()
        self.steps = steps
        self.stem = nn.ModuleList([TimeDistributed(nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8))),
                                   lif(),
                                   TimeDistributed(nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, channels, 3, padding=1),
                                                                 nn.BatchNorm2d(channels)))])
        self.rpe_lif = lif()
        self.rpe = TimeDistributed(nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels)))
        self.blocks = nn.ModuleList(Block(channels) for _ in range(blocks))
        self.head_lif = lif()
        self.head = nn.Linear(channels, classes)

    def tokens(self, images: torch.Tensor) -> tuple[torch.Tensor, int]:
        """(T, B, N, C) tokens after the stem and the relative position embedding, and the grid side."""
        x = images.unsqueeze(0).expand(self.steps, *images.shape)
        for layer in self.stem:
            x = layer(x)
        x = x + self.rpe(self.rpe_lif(x))
        t, b, c, h, w = x.shape
        return x.flatten(3).transpose(2, 3), h

    def classify(self, x: torch.Tensor, alive: torch.Tensor | None = None) -> torch.Tensor:
        """Logits from tokens (T, B, N, C): mean over the (alive) tokens -> LIF -> linear -> mean over T."""
        if alive is None:
            pooled = x.mean(2)
        else:
            w = alive.to(x.dtype)[None, :, :, None]
            pooled = (x * w).sum(2) / w.sum(2)
        return self.head(self.head_lif(pooled)).mean(0)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x, _ = self.tokens(images)
        for block in self.blocks:
            x = block(x)
        return self.classify(x)


def build(p: dict, classes: int) -> SpikingTransformer:
    """The model of the params section `tp_spikformer.model` (channels, blocks, steps)."""
    return SpikingTransformer(p["channels"], p["blocks"], classes, p["steps"])


# --- scores and the pruned forward ---------------------------------------------------------------------------------

def temporal_score(x: torch.Tensor) -> torch.Tensor:
    """softmax over tokens of mean_t |xbar_{t+1} - xbar_t|, xbar = mean over channels: (B, N)."""
    xbar = x.mean(-1)  # (T, B, N)
    return torch.softmax((xbar[1:] - xbar[:-1]).abs().mean(0), dim=-1)


def spatial_score(x: torch.Tensor, side: int) -> torch.Tensor:
    """softmax over tokens of -cos(x~_n, m_n): x~ the time mean, m its channel-summed 3x3 box mean: (B, N)."""
    xt = x.mean(0)  # (B, N, C)
    b, n, c = xt.shape
    grid = xt.transpose(1, 2).reshape(b, c, side, side)
    m = F.conv2d(grid, torch.full((c, c, 3, 3), 1.0 / 9.0, dtype=x.dtype), padding=1)
    m = m.reshape(b, c, n).transpose(1, 2)
    return torch.softmax(-F.cosine_similarity(xt, m, dim=-1), dim=-1)


def scores(criterion: str, x: torch.Tensor, side: int, generator: torch.Generator | None = None) -> torch.Tensor:
    if criterion == "ir":
        return temporal_score(x) + spatial_score(x, side)
    if criterion == "ir_inverted":  # the negative control: the same scores, the least informative tokens kept
        return -(temporal_score(x) + spatial_score(x, side))
    if criterion == "ir_other_image":  # the placebo: IR's scores of the next image of the batch (rolled by one)
        return (temporal_score(x) + spatial_score(x, side)).roll(1, dims=0)
    if criterion == "temporal":
        return temporal_score(x)
    if criterion == "spatial":
        return spatial_score(x, side)
    if criterion == "magnitude":
        return x.abs().sum(dim=(0, 3))
    if criterion == "random":
        return torch.rand(x.shape[1:3], generator=generator)
    raise ValueError(f"unknown criterion {criterion!r}; known: {CRITERIA}")


def gather(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x (T, B, N, C), idx (B, K) -> (T, B, K, C)."""
    return x.gather(2, idx[None, :, :, None].expand(x.shape[0], -1, -1, x.shape[3]))


def scatter(x: torch.Tensor, idx: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    return x.scatter(2, idx[None, :, :, None].expand(x.shape[0], -1, -1, x.shape[3]), values)


@torch.no_grad()
def pruned_forward(model: SpikingTransformer, images: torch.Tensor, keep: list[int], criterion: str, mode: str,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """Logits with block l run on the top keep[l]^2 tokens by `criterion` only. early_stop: the others pass the block
    unchanged and stay for later blocks and the pooling; drop: they are gone for the rest of the network;
    early_stop_other_image: they stay, but with the state of the next image of the batch (rolled by one)."""
    if mode not in MODES:
        raise ValueError(f"unknown pruning mode {mode!r}; known: {MODES}")
    x, side = model.tokens(images)
    alive = torch.ones(x.shape[1:3], dtype=torch.bool)
    for block, k in zip(model.blocks, keep, strict=True):
        s = scores(criterion, x, side, generator)
        if mode == "drop":
            s = s.masked_fill(~alive, float("-inf"))
        idx = s.topk(min(k * k, int(alive.sum(1).min())), dim=1).indices
        skipped = x.roll(1, dims=1) if mode == "early_stop_other_image" else x  # the placebo: not this image's
        x = scatter(skipped, idx, block(gather(x, idx)))
        if mode == "drop":
            alive = torch.zeros_like(alive).scatter(1, idx, True)
    return model.classify(x, alive if mode == "drop" else None)


def cost(keep: list[int], tokens: int) -> float:
    """The fraction of token-blocks processed: sum_l k_l^2 / (L N)."""
    return sum(k * k for k in keep) / (len(keep) * tokens)


# --- training and evaluation ---------------------------------------------------------------------------------------

def train(model: SpikingTransformer, x, y, p: dict, seed: int, log=print) -> dict:
    """AdamW with a one-cycle learning rate (spec), fixed epochs; returns the curves {name: [(epoch, value)]}."""
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    per_epoch = -(-len(xt) // p["batch"])
    opt = torch.optim.AdamW(model.parameters(), lr=p["lr"], weight_decay=p["weight_decay"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=p["lr"], total_steps=p["epochs"] * per_epoch)
    curves: dict[str, list] = {"train_loss": [], "train_acc": []}
    for epoch in range(p["epochs"]):
        model.train()
        order, total, correct = torch.randperm(len(xt), generator=gen), 0.0, 0
        for start in range(0, len(xt), p["batch"]):
            idx = order[start:start + p["batch"]]
            logits = model(xt[idx])
            loss = F.cross_entropy(logits, yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            correct += int((logits.argmax(1) == yt[idx]).sum())
        curves["train_loss"].append((epoch, total / len(xt)))
        curves["train_acc"].append((epoch, correct / len(xt)))
        log(f"epoch {epoch}: loss={total / len(xt):.4f} acc={correct / len(xt):.4f}")
    return curves


@torch.no_grad()
def dense_accuracy(model: SpikingTransformer, x, y, batch: int = 250) -> float:
    model.eval()
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    return sum(int((model(xt[i:i + batch]).argmax(1) == yt[i:i + batch]).sum()) for i in range(0, len(xt), batch)) / len(xt)
