"""SCSD's core pieces as small functions: shared codebook, label-correlation view weights, losses, metrics.

Notation (paper / official code): V views, m_v in {0,1} availability, z_v = E_v(x_v), zq_v = VQ(z_v),
p_v = sigmoid(C_v zq_v), fused p = sum_v w_v p_v.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

EPS = 1e-8


# ------------------------------------------------------------------------------------- label graph
def label_graph(y: torch.Tensor, observed: torch.Tensor | None = None) -> torch.Tensor:
    """S: co-occurrence normalised by the diagonal, zero diagonal, symmetrised, row-normalised.

    S_kl = C_kl / C_kk with C = Y^T Y (soft Y allowed: predictions P_v). With an `observed` mask (missing
    training labels), C counts only sample pairs where both entries are observed: C = (Y*M)^T (Y*M) and
    C_kk is replaced by the mass of label k on samples where l is observed, (Y*M)^T M, so missing labels
    are not read as negatives (our choice; the official code uses the masked labels, see PAPER.md).
    """
    if observed is None:
        c = y.T @ y
        diag = torch.diagonal(c).clamp_min(EPS)[:, None].expand_as(c)
    else:
        ym = y * observed
        c = ym.T @ ym
        diag = (ym.T @ observed).clamp_min(EPS)
    s = c / diag
    s = s - torch.diag_embed(torch.diagonal(s))
    s = 0.5 * (s + s.T)
    return s / s.sum(1, keepdim=True).clamp_min(EPS)


def view_quality(probs: list[torch.Tensor], vmask: torch.Tensor, s_global: torch.Tensor) -> torch.Tensor:
    """q_v = -||S_v - S||_F, S_v from view v's predictions over the samples where v is available. [V]"""
    q = []
    for v, p in enumerate(probs):
        seen = vmask[:, v] > 0
        if seen.sum() < 2:  # a view absent from the batch gets the worst finite quality; it has no weight anyway
            q.append(torch.tensor(-10.0))
            continue
        q.append(-torch.linalg.norm(label_graph(p[seen]) - s_global))
    return torch.stack(q)


def view_weights(quality: torch.Tensor, vmask: torch.Tensor, tau: float) -> torch.Tensor:
    """w_iv = softmax over the sample's AVAILABLE views of q_v / tau. [n, V], rows sum to 1, 0 on missing views."""
    logits = (quality / tau)[None, :].expand_as(vmask).clone()
    logits = logits.masked_fill(vmask <= 0, float("-inf"))
    return torch.softmax(logits, dim=1)


def uniform_weights(vmask: torch.Tensor) -> torch.Tensor:
    return vmask / vmask.sum(1, keepdim=True).clamp_min(1.0)


def fuse(probs: list[torch.Tensor], weights: torch.Tensor) -> torch.Tensor:
    """p_i = sum_v w_iv p_iv."""
    return sum(weights[:, v:v + 1] * p for v, p in enumerate(probs))


# ------------------------------------------------------------------------------------------ codebook
def l2norm(x: torch.Tensor) -> torch.Tensor:
    return F.normalize(x, dim=-1, eps=1e-6)


def assign_codes(chunks: torch.Tensor, codebook: torch.Tensor) -> torch.Tensor:
    """Index of the nearest code in squared L2 for each (normalised) chunk. chunks [N, c], codebook [K, c]."""
    d = chunks.pow(2).sum(1, keepdim=True) - 2 * chunks @ codebook.T + codebook.pow(2).sum(1)[None, :]
    return d.argmin(1)


def kmeans_cosine(x: torch.Tensor, k: int, iters: int, generator: torch.Generator) -> torch.Tensor:
    """Spherical k-means (cosine similarity) on unit vectors x [N, c]; initial centres drawn from x."""
    n = x.shape[0]
    idx = torch.randint(0, n, (k,), generator=generator) if n < k else torch.randperm(n, generator=generator)[:k]
    centres = x[idx].clone()
    for _ in range(iters):
        assign = (x @ centres.T).argmax(1)
        sums = torch.zeros_like(centres).index_add_(0, assign, x)
        counts = torch.bincount(assign, minlength=k)
        centres = torch.where(counts[:, None] > 0, l2norm(sums), centres)
    return centres


class NormEMAVectorQuantizer(nn.Module):
    """Shared codebook over chunks of z: L2-normalised chunks and codes, EMA updates, k-means (cosine) init.

    z [n, Z] -> chunks [n * Z/c, c] -> nearest code; codes follow the EMA (decay) of their assigned chunks' mean,
    re-normalised. Straight-through estimator; loss = mse(zq.detach(), z_normalised) (commitment only).
    learn=False keeps the seeded random unit codes (no k-means init, no EMA): the negative control of a codebook
    that learned nothing from the views.
    """

    def __init__(self, n_codes: int, code_dim: int, decay: float = 0.99, kmeans_iters: int = 10, seed: int = 0,
                 learn: bool = True):
        super().__init__()
        self.code_dim, self.decay, self.kmeans_iters, self.learn = code_dim, decay, kmeans_iters, learn
        self.register_buffer("codebook", l2norm(torch.randn(n_codes, code_dim, generator=torch.Generator().manual_seed(seed))))
        self.register_buffer("cluster_size", torch.zeros(n_codes))
        self.register_buffer("embed_sum", self.codebook.clone())
        self.register_buffer("initialised", torch.tensor(False))
        self.register_buffer("usage", torch.zeros(n_codes))  # assignments counted over the last epoch (diagnostic)
        self.generator = torch.Generator().manual_seed(seed)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n, dim = z.shape
        chunks = l2norm(z.reshape(n * dim // self.code_dim, self.code_dim))
        if self.training and self.learn and not bool(self.initialised):
            self.codebook.copy_(kmeans_cosine(chunks.detach(), self.codebook.shape[0], self.kmeans_iters, self.generator))
            self.embed_sum.copy_(self.codebook)
            self.cluster_size.fill_(1.0)
            self.initialised.fill_(True)
        idx = assign_codes(chunks.detach(), self.codebook)
        q = self.codebook[idx]
        if self.training:
            self.usage += torch.bincount(idx, minlength=self.codebook.shape[0]).type(self.usage.dtype)
            if self.learn:
                self.ema_update(chunks.detach(), idx)
        loss = F.mse_loss(q.detach(), chunks)
        zq = chunks + (q - chunks).detach()  # straight-through
        return zq.reshape(n, dim), loss, idx.reshape(n, -1)

    @torch.no_grad()
    def ema_update(self, chunks: torch.Tensor, idx: torch.Tensor) -> None:
        onehot = F.one_hot(idx, self.codebook.shape[0]).type(chunks.dtype)
        counts = onehot.sum(0)
        self.cluster_size.mul_(self.decay).add_(counts, alpha=1 - self.decay)
        self.embed_sum.mul_(self.decay).add_(onehot.T @ chunks, alpha=1 - self.decay)
        means = self.embed_sum / self.cluster_size.clamp_min(1e-5)[:, None]
        self.codebook.copy_(l2norm(means))


# ------------------------------------------------------------------------------------------- losses
def masked_bce(p: torch.Tensor, target: torch.Tensor, observed: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
    """BCE over observed label entries (and only over samples with rows == 1, e.g. those that have the view)."""
    m = observed if rows is None else observed * rows[:, None]
    bce = F.binary_cross_entropy(p.clamp(1e-6, 1 - 1e-6), target, reduction="none")
    return (bce * m).sum() / m.sum().clamp_min(1.0)


def cross_view_reconstruction(x: list[torch.Tensor], recon: dict, vmask: torch.Tensor) -> torch.Tensor:
    """L_rec = mean_i( sum_{v,j} m_v m_j ||x_j - xhat_j^(v)||^2 / d_j / sum_v m_v ); recon[(v, j)] = D_j(zq_v)."""
    total = torch.zeros(vmask.shape[0])
    for (v, j), xhat in recon.items():
        err = (x[j] - xhat).pow(2).mean(1)  # ||.||^2 / d_j
        total = total + vmask[:, v] * vmask[:, j] * err
    return (total / vmask.sum(1).clamp_min(1.0)).mean()


def info_nce(za: torch.Tensor, zb: torch.Tensor, tau: float) -> torch.Tensor:
    """Instance-level InfoNCE between two views of the same samples (rows aligned), symmetric."""
    if za.shape[0] < 2:
        return torch.zeros(())
    logits = l2norm(za) @ l2norm(zb).T / tau
    target = torch.arange(za.shape[0])
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


# ------------------------------------------------------------------------------------------- metrics
def multilabel_metrics(y: np.ndarray, scores: np.ndarray) -> dict:
    """AP, 1-HL, 1-RL, AUC (macro over labels with both classes), 1-OneError, 1-Coverage (normalised), F1s."""
    from sklearn import metrics as skm

    y = y.astype(int)
    keep = (y.sum(1) > 0) & (y.sum(1) < y.shape[1])  # ranking metrics need a positive and a negative label
    both = (y.sum(0) > 0) & (y.sum(0) < y.shape[0])
    pred = (scores >= 0.5).astype(int)
    top = scores[keep].argmax(1)
    return {
        "ap": float(skm.label_ranking_average_precision_score(y[keep], scores[keep])),
        "one_minus_hl": float(1 - skm.hamming_loss(y, pred)),
        "one_minus_rl": float(1 - skm.label_ranking_loss(y[keep], scores[keep])),
        "auc": float(skm.roc_auc_score(y[:, both], scores[:, both], average="macro")),
        "one_minus_oneerror": float(y[keep][np.arange(keep.sum()), top].mean()),
        "one_minus_coverage": float(1 - (skm.coverage_error(y[keep], scores[keep]) - 1) / y.shape[1]),
        "macro_f1": float(skm.f1_score(y, pred, average="macro", zero_division=0)),
        "micro_f1": float(skm.f1_score(y, pred, average="micro", zero_division=0)),
    }


def val_score(m: dict) -> float:
    """Early-stopping score: mean of AP, 1-RL and AUC (the official code's selection metrics)."""
    return (m["ap"] + m["one_minus_rl"] + m["auc"]) / 3
