"""A tiny transformer language model that learns on a CPU in minutes, shared by the language-model papers (hex,
and the planned refusion and code_reasoning): rotary positions, causal or bidirectional attention, and a KV cache
that can crop, append and select (its tokenizer: workflow/lib/tokenizer.py).

Positions are explicit (`positions`, one id per token) and only rotate queries and keys: a model sees tokens at
their *original* positions whatever order they are fed in, while causal attention is by order in the sequence (the
cache's entries, then this forward's tokens, each attending to itself and everything before it). That is what
ReFusion needs: decoded slots moved before the masked ones keep their position ids, and every later token attends
to all of them, so the cache is reused whole. Rotary embeddings (RoPE) rather than learned absolute
positions: a 3-layer model with learned positions learned the format of the arithmetic chains but not the
arithmetic (the specs' calibration, shared/papers/hex.md section 7.8).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

@dataclass(frozen=True)
class Config:
    vocab: int
    d: int = 64
    layers: int = 3
    heads: int = 4
    causal: bool = False
    max_positions: int = 512  # the rotary table's length
    shift: bool = False       # bidirectional only: position i's logits come from position i - 1 (Dream's shift, see as_bidirectional)


def rotary_table(max_positions: int, head_dim: int, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_positions, dtype=torch.float32), inv)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE on (B, H, L, dh) with cos/sin of shape (B, 1, L, dh/2): pairs (x1, x2) of the two halves rotated."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class KVCache:
    """Keys, values and their positions per layer, (B, H, L, dh) and (B, L). `append` adds a forward's keys (the
    model calls it), `crop` keeps the first n entries (drop unverified drafts), `select` keeps batch rows."""

    def __init__(self, layers: int):
        self.k: list[torch.Tensor | None] = [None] * layers
        self.v: list[torch.Tensor | None] = [None] * layers
        self.positions: torch.Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.positions is None else self.positions.shape[1]

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.k[layer] is not None:
            k, v = torch.cat([self.k[layer], k], dim=2), torch.cat([self.v[layer], v], dim=2)
        self.k[layer], self.v[layer] = k, v
        return k, v

    def append_positions(self, positions: torch.Tensor) -> None:
        self.positions = positions if self.positions is None else torch.cat([self.positions, positions], dim=1)

    def crop(self, n: int) -> None:
        self.k = [None if k is None else k[:, :, :n] for k in self.k]
        self.v = [None if v is None else v[:, :, :n] for v in self.v]
        self.positions = None if self.positions is None else self.positions[:, :n]

    def select(self, rows: torch.Tensor) -> None:
        self.k = [None if k is None else k[rows] for k in self.k]
        self.v = [None if v is None else v[rows] for v in self.v]
        self.positions = None if self.positions is None else self.positions[rows]


class Block(nn.Module):
    """Pre-LN attention + MLP."""

    def __init__(self, c: Config):
        super().__init__()
        self.heads, self.causal = c.heads, c.causal
        self.ln1, self.ln2 = nn.LayerNorm(c.d), nn.LayerNorm(c.d)
        self.qkv, self.proj = nn.Linear(c.d, 3 * c.d), nn.Linear(c.d, c.d)
        self.mlp = nn.Sequential(nn.Linear(c.d, 4 * c.d), nn.GELU(), nn.Linear(4 * c.d, c.d))

    def forward(self, x, cos, sin, layer: int, cache: KVCache | None):
        B, L, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, L, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        mask = None
        if self.causal:  # by order: query i of this forward sees the cached keys and this forward's keys 0..i
            before = k.shape[2] - L
            mask = torch.ones(L, k.shape[2], dtype=torch.bool).tril(diagonal=before)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(B, L, D))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        if (c.d // c.heads) % 2:
            raise ValueError(f"d / heads = {c.d // c.heads} must be even for rotary embeddings")
        if c.shift and c.causal:
            raise ValueError("shift is for a bidirectional model initialised from a causal one, not for a causal model")
        self.config = c
        self.embed = nn.Embedding(c.vocab, c.d)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.ln = nn.LayerNorm(c.d)
        self.head = nn.Linear(c.d, c.vocab, bias=False)
        cos, sin = rotary_table(c.max_positions, c.d // c.heads)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor | None = None,
                cache: KVCache | None = None) -> torch.Tensor:
        """Logits (B, L, vocab). positions: (B, L) or (L,); by default the next L positions (0.. without a cache,
        len(cache).. with one: plain left-to-right decoding). With a cache, this forward's keys are appended to it."""
        B, L = tokens.shape
        if positions is None:
            start = len(cache) if cache is not None else 0
            positions = torch.arange(start, start + L, device=tokens.device)
        positions = positions.expand(B, L) if positions.dim() == 1 else positions
        if int(positions.max()) >= self.config.max_positions:
            raise ValueError(f"position {int(positions.max())} beyond the rotary table ({self.config.max_positions})")
        cos, sin = self.cos[positions][:, None], self.sin[positions][:, None]
        if cache is not None:
            cache.append_positions(positions)
        x = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, i, cache)
        logits = self.head(self.ln(x))
        if self.config.shift:  # position i predicted from position i - 1's state (position 0 from its own)
            logits = torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
        return logits


def teacher_forced_logits(model: TinyLM, prompt: torch.Tensor, response: torch.Tensor) -> torch.Tensor:
    """The logits of each response token given the prompt and the true tokens before it (B x G x vocab)."""
    return model(torch.cat([prompt, response[:, :-1]], dim=1))[:, prompt.shape[1] - 1:]


def next_token_loss(model: TinyLM, prompt: torch.Tensor, response: torch.Tensor, eos: int | None = None) -> torch.Tensor:
    """The autoregressive objective on the response only: mean -log p(y_t | prompt, y_<t) over its G tokens (its
    <eos> padding included, so the model learns to stop). With `eos`, only the tokens up to each row's first <eos>
    are scored: for responses much shorter than G, the padding would otherwise carry most of the loss. A causal
    model is then fed only up to the batch's last scored token: the columns after it change no scored logit."""
    scored = None
    if eos is not None:
        is_eos = response == eos
        scored = (is_eos.cumsum(1) - is_eos.int()) == 0  # up to and including the first <eos>
        if model.config.causal:
            keep = int(scored.sum(1).max())
            response, scored = response[:, :keep], scored[:, :keep]
    logits = teacher_forced_logits(model, prompt, response)
    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), response.reshape(-1), reduction="none")
    if scored is None:
        return losses.mean()
    return (losses * scored.reshape(-1)).sum() / scored.sum()


@torch.no_grad()
def greedy(model: TinyLM, prompts: torch.Tensor, length: int, eos: int) -> torch.Tensor:
    """Greedy decoding of a batch of (right-padded) prompts with the KV cache: `length` tokens per row, every
    token after a row's first <eos> set to <eos>."""
    cache = KVCache(model.config.layers)
    logits = model(prompts, cache=cache)
    out, ended = [], torch.zeros(prompts.shape[0], 1, dtype=torch.bool)
    for _ in range(length):
        token = logits[:, -1].argmax(-1, keepdim=True)
        out.append(token)
        ended |= token == eos
        if ended.all():  # the rest would be set to <eos> anyway
            break
        logits = model(token, cache=cache)
    tokens = torch.cat(out, 1)
    ended = (tokens == eos).cumsum(1) > 0
    tokens = torch.where(ended, torch.full_like(tokens, eos), tokens)
    return torch.cat([tokens, torch.full((tokens.shape[0], length - tokens.shape[1]), eos)], 1)


def as_bidirectional(model: TinyLM, shift: bool = False) -> TinyLM:
    """A bidirectional copy of a causal model: the same weights, attention over the whole sequence (a masked-diffusion
    model initialised from an autoregressive one, as Dream-7B from Qwen2.5). The two agree exactly at the last
    position of a sequence, which sees everything in both. With `shift` (Dream's shift operation), position i's
    logits are read from position i - 1, where the causal model predicted token i: the next-token head is kept."""
    from dataclasses import replace

    out = TinyLM(replace(model.config, causal=False, shift=shift))
    out.load_state_dict(model.state_dict())
    return out


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@dataclass(frozen=True)
class Schedule:
    """The knobs of the training loop (fit); each paper fills them from its own params section."""

    steps: int
    lr: float
    weight_decay: float
    warmup: int  # steps of linear warm-up, then cosine decay to zero at `steps`
    curve_every: int  # a curve point every this many steps (and at the end)


def fit(model: nn.Module, batch_loss, schedule: Schedule, curve) -> float:
    """The tiny LMs' training loop: AdamW with warm-up and cosine decay (the Schedule); batch_loss() gives one batch's
    loss; curve(step, mean loss) every `curve_every` steps and at the end. Returns the last interval's mean loss; the
    model is left in eval mode."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=schedule.lr, weight_decay=schedule.weight_decay)
    lr_schedule = warmup_cosine(optimizer, schedule.warmup, schedule.steps)
    running, mean = [], float("nan")
    model.train()
    for step in range(1, schedule.steps + 1):
        loss = batch_loss()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        lr_schedule.step()
        running.append(loss.item())
        if step % schedule.curve_every == 0 or step == schedule.steps:
            mean = sum(running) / len(running)
            curve(step, mean)
            running = []
    model.eval()
    return mean


def warmup_cosine(optimizer, warmup: int, total: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over `warmup` steps, then cosine decay to zero at `total` (the specs' schedule)."""
    import math

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
