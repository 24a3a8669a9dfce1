"""Models and the continual protocol of the ``stbp`` reproduction.

STBP (faithful to the official ``model.py``; tensors (batch B, nodes N, channels)):

* ``FreNet(z) = irfft(rfft(z, dim=-1, 'ortho') * K, n=d, 'ortho')`` with a learnable complex ``K in C^{d/2+1}``;
  the FFT runs over the hidden/feature axis of the embedded window (the paper's design, kept as is);
* ``FConv(a -> b): h = FreNet(W_n x + b_n) + W_s x``;
* pattern bank ``P in R^{N x 3d}`` (U(-0.1, 0.1)), split into gate, scale, memory (each N x d);
* encoder block: ``x <- x + gate * DLGA(LN(x)(1 + scale), memory)``, ``x <- x + gate * FFN(LN(x)(1 + scale))``,
  LN over (nodes, channels) per sample without affine;
* DLGA: ``q, k, v = ReLU(1x1 conv)``, softmax over the feature axis of q, k and memory (after / sqrt(d)),
  ``out = ReLU(1x1 conv(q (k^T v) + q (memory^T v)))`` - linear attention over all nodes, O(N d^2);
* ``y = Linear(12 -> 12)(GELU(FConv(d -> 12)(h) + x_in))`` with ``h = ReLU(FConv(12 -> d)(x_in))``.

Baselines: ``GcnTcn`` (TrafficStream-style: 1-D temporal conv, 2-layer GCN on the normalised graph) and its
EAC-style variant with a learnable per-node prompt added to the input embedding.

Continual protocol (``METHODS``): for each year, how the model of the previous year is carried over
(fresh / loaded), which parameters train, and whether it trains at all. ``fit`` is the training loop:
MAE loss, AdamW, early stopping on validation MAE, best weights restored.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from workflow.lib.training import EarlyStopping  # shared by every paper that trains with a validation split

# method -> (model family, protocol). protocol: "stbp" = freeze all but node-specific rows after year 0;
# "static" = no training after year 0; "retrain" = fresh model every year; "finetune" = load and train all;
# "backbone_only" = STBP's mirror image: the node rows are frozen (new rows stay at init), everything else trains.
METHODS = {
    "stbp": ("stbp", "stbp"),
    "static": ("stbp", "static"),
    "retrain": ("stbp", "retrain"),
    "finetune_all": ("stbp", "finetune"),
    "backbone_only": ("stbp", "backbone_only"),
    "trafficstream_lite": ("gcn", "finetune"),
    "eac_lite": ("gcn_prompt", "stbp"),
    "stbp_no_freq": ("stbp_no_freq", "stbp"),
    "stbp_no_bank_mod": ("stbp_no_bank_mod", "stbp"),
    # placebo of the bank's claims: STBP whose bank rows are dealt to the nodes by a fresh random permutation in every
    # training batch, so no row can hold one node's pattern; parameters, protocol and budget are STBP's
    "stbp_shuffled_bank": ("stbp_shuffled_bank", "stbp"),
}


class FreNet(nn.Module):
    """Learnable complex filter over the last axis (length d): irfft(rfft(z) * K)."""

    def __init__(self, d: int, identity: bool = False):
        super().__init__()
        self.d, self.identity = d, identity
        w = torch.empty(d // 2 + 1, 2)
        nn.init.xavier_uniform_(w)
        self.weight = nn.Parameter(w)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if self.identity:  # ablation stbp_no_freq
            return z
        spec = torch.fft.rfft(z, dim=-1, norm="ortho") * torch.view_as_complex(self.weight)
        return torch.fft.irfft(spec, n=self.d, dim=-1, norm="ortho")


class FConv(nn.Module):
    """h = FreNet(W_n x + b) + W_s x."""

    def __init__(self, d_in: int, d_out: int, freq: bool = True):
        super().__init__()
        self.neigh = nn.Linear(d_in, d_out)
        self.self_ = nn.Linear(d_in, d_out, bias=False)
        self.fre = FreNet(d_out, identity=not freq)

    def forward(self, x):
        return self.fre(self.neigh(x)) + self.self_(x)


def joint_layer_norm(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Normalise each sample jointly over (nodes, channels), no affine (the official LayerNorm)."""
    mu = x.mean(dim=(1, 2), keepdim=True)
    var = x.var(dim=(1, 2), unbiased=False, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps)


class DLGA(nn.Module):
    """Linear graph attention over all nodes (one head) with the bank's memory as a second key set."""

    def __init__(self, d: int):
        super().__init__()
        self.q, self.k, self.v, self.out = (nn.Linear(d, d) for _ in range(4))
        self.d = d

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None) -> torch.Tensor:
        s = math.sqrt(self.d)
        q = torch.softmax(F.relu(self.q(x)) / s, dim=-1)
        k = torch.softmax(F.relu(self.k(x)) / s, dim=-1)
        v = F.relu(self.v(x))
        att = q @ (k.transpose(1, 2) @ v)  # (B,N,d) @ (B,d,d): O(N d^2), never N x N
        if memory is not None:
            m = torch.softmax(memory / s, dim=-1)  # (N, d), shared by the batch
            att = att + q @ torch.einsum("nx,bny->bxy", m, v)
        return F.relu(self.out(att))


class STBP(nn.Module):
    """The STBP backbone + pattern bank (see module docstring). ``bank_mod=False``: gate 1, scale 0, no memory.

    ``shuffle_bank=True`` (the placebo ``stbp_shuffled_bank``): in training mode each forward pass reads the bank rows
    through a fresh random permutation of the nodes (drawn from ``shuffle_seed``; seeded per run by ``seed_shuffle``),
    so a row never belongs to one node; evaluation reads row i for node i as STBP does. Everything else is STBP's."""

    node_param = "bank"

    def __init__(self, n_nodes: int, x_len: int = 12, y_len: int = 12, d: int = 32, dropout: float = 0.0,
                 freq: bool = True, bank_mod: bool = True, shuffle_bank: bool = False):
        super().__init__()
        self.d, self.bank_mod, self.dropout = d, bank_mod, dropout
        self.shuffle_bank, self.shuffle_gen = shuffle_bank, torch.Generator().manual_seed(0)
        self.fconv1 = FConv(x_len, d, freq)
        self.attn = DLGA(d)
        self.ffn = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Dropout(dropout), nn.Linear(d, d), nn.Dropout(dropout))
        self.fconv2 = FConv(d, x_len, freq)
        self.fc = nn.Linear(x_len, y_len)
        self.bank = nn.Parameter(torch.empty(n_nodes, 3 * d).uniform_(-0.1, 0.1))

    def expand(self, n_nodes: int) -> None:
        """Append U(-0.1, 0.1) rows for new nodes; the old rows are kept as they are."""
        extra = n_nodes - self.bank.shape[0]
        if extra > 0:
            new = torch.empty(extra, self.bank.shape[1]).uniform_(-0.1, 0.1)
            self.bank = nn.Parameter(torch.cat([self.bank.detach(), new], dim=0))

    def seed_shuffle(self, seed: int) -> None:
        """The placebo's permutations come from their own generator (the global RNG, hence the init, is untouched)."""
        self.shuffle_gen = torch.Generator().manual_seed(int(seed))

    def forward(self, x: torch.Tensor, nodes: torch.Tensor, adj: torch.Tensor | None = None) -> torch.Tensor:
        h = F.relu(self.fconv1(x))
        if self.shuffle_bank and self.training:
            nodes = nodes[torch.randperm(len(nodes), generator=self.shuffle_gen)]
        if self.bank_mod:
            gate, scale, memory = torch.chunk(self.bank[nodes], 3, dim=-1)
        else:
            gate, scale, memory = 1.0, 0.0, None
        h = h + gate * self.attn(joint_layer_norm(h) * (1 + scale), memory)
        h = h + gate * self.ffn(joint_layer_norm(h) * (1 + scale))
        out = self.fc(F.gelu(self.fconv2(h) + x))
        return F.dropout(out, p=self.dropout, training=self.training)


class GraphConv(nn.Module):
    """TrafficStream's batch graph convolution with a separate self weight: h = A_hat x W_n + b + x W_s."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.neigh = nn.Linear(d_in, d_out)
        self.self_ = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        return adj @ self.neigh(x) + self.self_(x)


class GcnTcn(nn.Module):
    """TrafficStream-style backbone (its Basic_Model): GraphConv(12 -> d), ReLU, a 1-D conv (kernel 3) over the
    feature axis, GraphConv(d -> 12), the input residual, Linear(12 -> 12)(GELU(.)). ``prompt=True``: EAC-style
    learnable per-node prompt (R^d) added to the embedding after the first graph convolution."""

    def __init__(self, n_nodes: int, x_len: int = 12, y_len: int = 12, d: int = 32, prompt: bool = False):
        super().__init__()
        self.gcn1 = GraphConv(x_len, d)
        self.tcn = nn.Conv1d(1, 1, kernel_size=3, padding=1)
        self.gcn2 = GraphConv(d, x_len)
        self.fc = nn.Linear(x_len, y_len)
        self.node_param = "prompt" if prompt else None
        self.prompt = nn.Parameter(torch.empty(n_nodes, d).uniform_(-0.1, 0.1)) if prompt else None

    def expand(self, n_nodes: int) -> None:
        if self.prompt is not None and n_nodes > self.prompt.shape[0]:
            new = torch.empty(n_nodes - self.prompt.shape[0], self.prompt.shape[1]).uniform_(-0.1, 0.1)
            self.prompt = nn.Parameter(torch.cat([self.prompt.detach(), new], dim=0))

    def forward(self, x: torch.Tensor, nodes: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        h = F.relu(self.gcn1(x, adj))
        if self.prompt is not None:
            h = h + self.prompt[nodes]
        h = self.tcn(h.reshape(b * n, 1, -1)).reshape(b, n, -1)
        h = self.gcn2(h, adj)
        return self.fc(F.gelu(h + x))


def make_model(family: str, n_nodes: int, d: int, x_len: int = 12, y_len: int = 12, dropout: float = 0.0) -> nn.Module:
    if family == "stbp":
        return STBP(n_nodes, x_len, y_len, d, dropout)
    if family == "stbp_no_freq":
        return STBP(n_nodes, x_len, y_len, d, dropout, freq=False)
    if family == "stbp_no_bank_mod":
        return STBP(n_nodes, x_len, y_len, d, dropout, bank_mod=False)
    if family == "stbp_shuffled_bank":
        return STBP(n_nodes, x_len, y_len, d, dropout, shuffle_bank=True)
    if family in ("gcn", "gcn_prompt"):
        return GcnTcn(n_nodes, x_len, y_len, d, prompt=family == "gcn_prompt")
    raise ValueError(f"unknown model family '{family}'; known: stbp, stbp_no_freq, stbp_no_bank_mod, "
                     "stbp_shuffled_bank, gcn, gcn_prompt")


def normalised_adjacency(w: np.ndarray) -> torch.Tensor:
    """GCN propagation matrix D^-1/2 (A + I) D^-1/2 (Kipf & Welling)."""
    a = np.asarray(w, dtype=float) + np.eye(len(w))
    d = 1.0 / np.sqrt(a.sum(axis=1))
    return torch.as_tensor(a * d[:, None] * d[None, :], dtype=torch.float32)


def freeze_all_but_nodes(model: nn.Module) -> None:
    """STBP's incremental-year rule: only the node-specific rows (bank / prompt) stay trainable."""
    for name, p in model.named_parameters():
        p.requires_grad_(name == model.node_param)


def unfreeze(model: nn.Module) -> None:
    for p in model.parameters():
        p.requires_grad_(True)


def freeze_nodes(model: nn.Module) -> None:
    """The backbone_only baseline: every parameter but the node-specific rows (bank / prompt) trains."""
    for name, p in model.named_parameters():
        p.requires_grad_(name != model.node_param)


def trainable_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def masked_mae_loss(pred: torch.Tensor, true: torch.Tensor) -> torch.Tensor:
    ok = torch.isfinite(true)
    return (pred - torch.nan_to_num(true)).abs()[ok].mean()


def predict(model: nn.Module, x: torch.Tensor, nodes: torch.Tensor, adj: torch.Tensor, batch: int = 256) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return torch.cat([model(x[i:i + batch], nodes, adj) for i in range(0, len(x), batch)]) if len(x) else x


def fit(model: nn.Module, train: tuple, val: tuple, nodes: torch.Tensor, adj: torch.Tensor, *, lr: float,
        batch: int, max_epochs: int, patience: int, seed: int, weight_decay: float = 0.01) -> dict:
    """MAE loss, AdamW on the trainable parameters, early stop on validation MAE; best weights restored.

    Returns {"epochs", "best_epoch", "best_val_mae", "seconds", "cpu_seconds", "curve"}; nothing trainable -> no
    epoch. ``cpu_seconds`` is the process's CPU time (one torch thread): unlike wall time, it barely depends on
    what else runs on the machine.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    start, cpu_start = time.time(), time.process_time()
    if not params or max_epochs <= 0:
        return {"epochs": 0, "best_epoch": 0, "best_val_mae": float("nan"), "seconds": 0.0, "cpu_seconds": 0.0,
                "curve": []}
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    gen = torch.Generator().manual_seed(seed)
    xtr, ytr = train
    stopper, curve = EarlyStopping(model, patience), []
    for epoch in range(1, max_epochs + 1):
        model.train()
        order = torch.randperm(len(xtr), generator=gen)
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            loss = masked_mae_loss(model(xtr[idx], nodes, adj), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        val_mae = float(masked_mae_loss(predict(model, val[0], nodes, adj), val[1]))
        curve.append((epoch, val_mae))
        if stopper.update(epoch, val_mae):
            break
    stopper.restore()
    return {"epochs": len(curve), "best_epoch": stopper.best_epoch, "best_val_mae": stopper.best,
            "seconds": time.time() - start, "cpu_seconds": time.process_time() - cpu_start, "curve": curve}


def carry_over(method: str, prev: nn.Module | None, year: int, n_nodes: int, d: int, dropout: float = 0.0) -> tuple[nn.Module, bool]:
    """The model a method starts year ``year`` with, and whether it trains this year.

    year 0: a fresh model, everything trains. Later: retrain -> fresh model; stbp-protocol -> previous model,
    rows appended, only those node rows trainable; finetune -> previous model, rows appended, all trainable;
    backbone_only -> previous model, rows appended, all but the node rows trainable; static -> previous model,
    rows appended, no training.
    """
    family, protocol = METHODS[method]
    if year == 0 or protocol == "retrain":
        return make_model(family, n_nodes, d, dropout=dropout), True
    model = prev
    model.expand(n_nodes)
    if protocol == "stbp":
        freeze_all_but_nodes(model)
        trains = getattr(model, "bank_mod", True)  # no bank modulation: the bank is unused, nothing to train
        return model, trains
    unfreeze(model)
    if protocol == "backbone_only":
        freeze_nodes(model)
        return model, True
    return model, protocol == "finetune"
