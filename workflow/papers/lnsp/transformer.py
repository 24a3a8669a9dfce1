"""Small causal Transformer LMs as NSP teachers (spec 5.3 "Teacher LM").

Token ids: symbols ``0..k-1`` (alphabet order), ``EOS = k`` (predicted only), ``BOS = k+1`` and ``PAD = k+2``
(inputs only). The model reads ``BOS x_1 .. x_n`` and predicts ``x_1 .. x_n EOS``; outputs are logits over
``Sigma + {EOS}``. Support truncation (min-p): ``C_T(y) = {s : p(s|y) >= p_min * max_s' p(s'|y)}``.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from .oracles import Teacher

POS_KINDS = ("learned", "none", "alibi")

__all__ = ["POS_KINDS", "CausalTransformerLM", "model_config", "build_model", "train_transformer", "TransformerTeacher"]


def model_config(alphabet, n_layers: int = 2, d_model: int = 64, n_heads: int = 4, max_len: int = 64,
                 d_ff: int | None = None, pos: str = "learned") -> dict:
    """Plain (JSON-able) architecture description; ``max_len`` = longest word the model can read (positions
    ``0..max_len``, position 0 is BOS); ``pos``: "learned" absolute positions (spec), "none" (NoPE: the causal
    mask alone carries order) or "alibi" (half of the heads NoPE, the others with ALiBi recency biases
    ``-slope (i - j)``, slopes ``2^-1, 2^-3, ...``). Default = spec default (2 layers, d = 64, 4 heads, learned);
    smoke: 1 layer, d = 32."""
    if pos not in POS_KINDS:
        raise ValueError(f"pos must be one of {POS_KINDS}")
    return {"alphabet": list(alphabet), "n_layers": int(n_layers), "d_model": int(d_model), "n_heads": int(n_heads),
            "max_len": int(max_len), "d_ff": int(d_ff if d_ff is not None else 4 * d_model), "pos": pos}


class _Block(nn.Module):
    """Pre-LN block: ``h + MHA(LN(h))`` then ``h + FF(LN(h))`` (GELU), attention with an additive mask."""

    def __init__(self, d, n_heads, d_ff):
        super().__init__()
        self.h = n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, d_ff), nn.GELU(), nn.Linear(d_ff, d))

    def forward(self, x, bias):
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
        return x + self.ff(self.ln2(x))


class CausalTransformerLM(nn.Module):
    """Token embeddings (+ learned position embeddings for ``pos="learned"``) -> ``n_layers`` pre-LN causal
    self-attention blocks (no dropout) -> LayerNorm -> linear head over ``Sigma + {EOS}``. Written out instead of
    ``nn.TransformerEncoder`` because the latter's inference fast path mishandles per-head float masks."""

    def __init__(self, config: dict):
        super().__init__()
        self.config = dict(config)
        k = len(config["alphabet"])
        d = config["d_model"]
        if d % config["n_heads"]:
            raise ValueError("d_model must be divisible by n_heads")
        self.k = k
        self.tok = nn.Embedding(k + 3, d)
        self.pos = nn.Embedding(config["max_len"] + 1, d)
        self.blocks = nn.ModuleList(_Block(d, config["n_heads"], config["d_ff"]) for _ in range(config["n_layers"]))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, k + 1)
        H = config["n_heads"]
        slopes = [0.0] * (H // 2) + [2.0 ** -(2 * i + 1) for i in range(H - H // 2)]
        self.register_buffer("slopes", torch.tensor(slopes if config.get("pos") == "alibi" else [0.0] * H),
                             persistent=False)

    @property
    def bos(self) -> int:
        return self.k + 1

    @property
    def pad(self) -> int:
        return self.k + 2

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` (B, T) long, starting with BOS, right-padded with PAD -> logits (B, T, k+1)."""
        B, T = tokens.shape
        pos = torch.arange(T, device=tokens.device)
        h = self.tok(tokens)
        if self.config.get("pos", "learned") == "learned":
            h = h + self.pos(pos)[None]
        rel = (pos[:, None] - pos[None, :]).to(h.dtype)
        bias = torch.where(rel < 0, float("-inf"), -self.slopes[:, None, None] * rel[None])  # (H, T, T)
        for blk in self.blocks:
            h = blk(h, bias[None])
        return self.head(self.norm(h))


def build_model(config: dict, state_dict: dict | None = None, seed: int = 0) -> CausalTransformerLM:
    """Model of ``config``; loads ``state_dict`` if given (the inverse of saving ``model.state_dict()``)."""
    torch.manual_seed(seed)
    m = CausalTransformerLM(config)
    if state_dict is not None:
        m.load_state_dict(state_dict)
    m.eval()
    return m


def _encode(words, alphabet, bos, pad):
    idx = {a: i for i, a in enumerate(alphabet)}
    T = max(len(w) for w in words) + 1
    x = np.full((len(words), T), pad, dtype=np.int64)
    y = np.full((len(words), T), -100, dtype=np.int64)
    for r, w in enumerate(words):
        ids = [idx[a] for a in w]
        x[r, 0] = bos
        x[r, 1:len(ids) + 1] = ids
        y[r, :len(ids)] = ids
        y[r, len(ids)] = len(alphabet)  # EOS
    return torch.from_numpy(x), torch.from_numpy(y)


def train_transformer(words, alphabet, n_layers: int = 2, d_model: int = 64, n_heads: int = 4, max_len: int = 64,
                      pos: str = "learned", steps: int = 1500, batch_size: int = 64, lr: float = 1e-3, weight_decay: float = 0.01,
                      lr_schedule: str = "constant", seed: int = 0, progress=None, log_every: int = 50):
    """Next-token cross-entropy training (targets ``x_1..x_n EOS``) of a ``CausalTransformerLM`` on the positive
    ``words`` with AdamW (spec: lr 1e-3, 1 500 steps, batch 64; ``lr_schedule`` "constant" or "cosine"), minibatches
    drawn uniformly with replacement from a seeded generator. ``progress(step, loss)`` is called every
    ``log_every`` steps. Returns ``(model (eval mode), info)`` with ``info = {"config", "losses" (every
    log_every steps), "final_loss" (mean of the last 50 steps), "steps", "time_s"}``."""
    torch.manual_seed(seed)
    words = [tuple(w) for w in words]
    if any(len(w) > max_len for w in words):
        raise ValueError("a training word is longer than max_len")
    config = model_config(alphabet, n_layers, d_model, n_heads, max_len, pos=pos)
    model = CausalTransformerLM(config)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    sched = None
    if lr_schedule == "cosine":
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=lr * 0.05)
    elif lr_schedule != "constant":
        raise ValueError("lr_schedule must be 'constant' or 'cosine'")
    gen = torch.Generator().manual_seed(seed)
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
    losses, recent = [], []
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        idx = torch.randint(len(words), (batch_size,), generator=gen).tolist()
        x, y = _encode([words[i] for i in idx], config["alphabet"], model.bos, model.pad)
        logits = model(x)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        recent.append(float(loss.detach()))
        recent = recent[-50:]
        if step % log_every == 0 or step == steps:
            losses.append(float(np.mean(recent)))
            if progress is not None:
                progress(step, float(np.mean(recent)))
    model.eval()
    return model, {"config": config, "losses": losses, "final_loss": float(np.mean(recent)), "steps": int(steps),
                   "time_s": float(time.perf_counter() - t0)}


class TransformerTeacher(Teacher):
    """NSP teacher backed by an LM with min-p truncation (spec 5.3 "Oracles"):

    * ``C_T(y) = {s in Sigma + {EOS} : p(s|y) >= p_min max_s' p(s'|y)}``;
    * ``MQ(x) = 1`` iff ``x_{i+1} in C_T(x_{:i})`` for all ``i`` and ``EOS in C_T(x)`` (words longer than the
      model's ``max_len`` are rejected);
    * NSP labels of a prefix ``y``: membership ``MQ(y)``, continuation bit of ``s`` = ``s in C_T(y)``;
    * ``Gen(x)``: ancestral sampling from the truncated, renormalised distribution until EOS, total length capped
      at ``gen_max_len`` (``None`` if the cap is hit); ``sample(n)``: ``n`` draws of ``Gen(empty)`` -- a draw that
      hits the cap is returned truncated (its prefix labels are still valid NSP evidence).
    * ``sample_untruncated(n, rng)``: ancestral sampling from the *untruncated* LM (baseline (i)).

    The support mask of every prefix ever evaluated is memoised (one forward pass of a word yields the masks of
    all its prefixes), so MQs cost one batched forward per new word."""

    def __init__(self, model: CausalTransformerLM, p_min: float = 0.05, gen_max_len: int = 60,
                 batch_size: int = 256):
        super().__init__()
        self.model = model.eval()
        self.alphabet = tuple(model.config["alphabet"])
        self.k = len(self.alphabet)
        self.p_min = float(p_min)
        self.max_len = int(model.config["max_len"])
        self.gen_max_len = min(int(gen_max_len), self.max_len)
        self.batch_size = int(batch_size)
        self._idx = {a: i for i, a in enumerate(self.alphabet)}
        self._mask = {}  # prefix (tuple) -> bool array (k+1,) support mask, last entry = EOS
        self.n_forward = 0

    # ----------------------------------------------------------------------------------- LM access
    @torch.no_grad()
    def _probs_of(self, words):
        """Next-symbol distributions after every prefix of every word: list of arrays ``(|w|+1, k+1)``."""
        out = [None] * len(words)
        order = sorted(range(len(words)), key=lambda i: len(words[i]))
        for b in range(0, len(order), self.batch_size):
            ids = order[b:b + self.batch_size]
            x, _ = _encode([words[i] for i in ids], self.alphabet, self.model.bos, self.model.pad)
            p = torch.softmax(self.model(x).double(), dim=-1).numpy()
            self.n_forward += 1
            for r, i in enumerate(ids):
                out[i] = p[r, :len(words[i]) + 1]
        return out

    def _support(self, p: np.ndarray) -> np.ndarray:
        return p >= self.p_min * p.max(axis=-1, keepdims=True)

    def _ensure(self, words):
        """Memoise the support masks of all prefixes of ``words`` (forwarding only words not yet covered)."""
        need = sorted({tuple(w) for w in words if tuple(w) not in self._mask})
        # drop words that are a prefix of another needed word (sorted order puts an extension right after)
        need = [w for j, w in enumerate(need) if not (j + 1 < len(need) and need[j + 1][:len(w)] == w)]
        if not need:
            return
        for w, p in zip(need, self._probs_of(need)):
            m = self._support(p)
            for n in range(len(w) + 1):
                self._mask[w[:n]] = m[n]

    def support(self, prefix) -> np.ndarray:
        """``C_T(prefix)`` as a bool mask over ``Sigma + {EOS}``."""
        prefix = tuple(prefix)
        self._ensure([prefix])
        return self._mask[prefix]

    def _walk(self, w):
        """``MQ(w)`` from memoised masks: ``True``/``False``, or ``None`` if a needed prefix is not memoised yet
        (a word whose prefix already left the support is rejected without any forward pass)."""
        for n in range(len(w) + 1):
            m = self._mask.get(w[:n])
            if m is None:
                return None
            if n == len(w):
                return bool(m[self.k])
            if not m[self._idx[w[n]]]:
                return False
        return None

    def _membership(self, words):
        out = np.zeros(len(words), dtype=bool)
        todo = []
        for i, w in enumerate(words):
            if len(w) <= self.max_len:
                r = self._walk(w)
                if r is None:
                    todo.append(i)
                else:
                    out[i] = r
        self._ensure([words[i] for i in todo])
        for i in todo:
            out[i] = self._walk(words[i])
        return out

    def nsp_batch(self, words):
        words = [tuple(w) for w in words]
        self._ensure(words)
        res = []
        for w in words:
            m = np.stack([self._mask[w[:n]] for n in range(len(w) + 1)])
            live = np.concatenate([[True], [bool(m[n, self._idx[a]]) for n, a in enumerate(w)]])
            live = np.logical_and.accumulate(live)  # prefix w[:n] inside the support's prefix set
            member = live & m[:, self.k]
            cont = m[:, :self.k] & live[:, None]
            res.append((member, cont))
        return res

    # ----------------------------------------------------------------------------------- sampling
    @torch.no_grad()
    def _generate(self, prefixes, rng, truncate: bool):
        """Batched ancestral sampling continuing each prefix; returns ``(continuation, finished)`` per prefix."""
        rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        seqs = [list(p) for p in prefixes]
        done = [len(s) > self.gen_max_len for s in seqs]
        start = [len(s) for s in seqs]
        finished = [False] * len(seqs)
        while not all(done):
            act = [i for i, d in enumerate(done) if not d]
            for b in range(0, len(act), self.batch_size):
                ids = act[b:b + self.batch_size]
                words = [tuple(seqs[i]) for i in ids]
                x, _ = _encode(words, self.alphabet, self.model.bos, self.model.pad)
                logits = self.model(x).double()
                self.n_forward += 1
                lens = torch.tensor([len(w) for w in words])
                p = torch.softmax(logits[torch.arange(len(ids)), lens], dim=-1).numpy()
                for r, i in enumerate(ids):
                    pr = p[r]
                    if truncate:
                        m = self._mask.setdefault(words[r], self._support(pr))
                        pr = np.where(m, pr, 0.0)
                    pr = pr / pr.sum()
                    j = int(rng.choice(self.k + 1, p=pr))
                    if j == self.k:
                        done[i] = finished[i] = True
                    else:
                        seqs[i].append(self.alphabet[j])
                        if len(seqs[i]) >= self.gen_max_len:
                            done[i] = True
        return [(tuple(s[st:]), f) for s, st, f in zip(seqs, start, finished)]

    def generate(self, prefix, rng):
        self.n_gen += 1
        prefix = tuple(prefix)
        if len(prefix) > self.gen_max_len:
            return None
        y, fin = self._generate([prefix], rng, truncate=True)[0]
        return y if fin else None

    def sample(self, n, rng):
        self.n_gen += int(n)
        return [y for y, _ in self._generate([()] * int(n), rng, truncate=True)]

    def sample_untruncated(self, n, rng):
        return [y for y, _ in self._generate([()] * int(n), rng, truncate=False)]
