"""Vector quantisation and the small conv encoder/decoder of the image-tokenizer papers (semhitok).

A codebook of `n_codes` vectors; each input vector is replaced by its nearest code (Euclidean, or cosine between
l2-normalised vectors), with the straight-through estimator for the gradient (van den Oord et al. 2017), codes
learnt by exponential moving averages of their assigned inputs (decay 0.99, Laplace-smoothed counts, eps 1e-5),
and codes left unused for `restart_every` training calls re-initialised from inputs of the current batch.

`groups` makes it hierarchical (SemHiTok's semantic-guided codebook): the codebook is `groups` sub-codebooks of
`n_codes // groups` codes each, and each input may only take a code of the sub-codebook its group index names.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, n_codes: int, dim: int, groups: int = 1, cosine: bool = False, decay: float = 0.99,
                 eps: float = 1e-5, beta: float = 0.25, restart_every: int = 200):
        super().__init__()
        if n_codes % groups:
            raise ValueError(f"{n_codes} codes do not split into {groups} equal sub-codebooks")
        self.n_codes, self.dim, self.groups, self.per_group = n_codes, dim, groups, n_codes // groups
        self.cosine, self.decay, self.eps, self.beta, self.restart_every = cosine, decay, eps, beta, restart_every
        codes = torch.randn(n_codes, dim)
        self.register_buffer("codes", F.normalize(codes, dim=1) if cosine else codes)
        self.register_buffer("ema_count", torch.ones(n_codes))
        self.register_buffer("ema_sum", self.codes.clone())
        self.register_buffer("used", torch.zeros(n_codes, dtype=torch.bool))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def prepare(self, z: torch.Tensor) -> torch.Tensor:
        return F.normalize(z, dim=-1) if self.cosine else z

    def assign(self, z: torch.Tensor, group: torch.Tensor | None = None) -> torch.Tensor:
        """The index of each row's nearest code (inside its group's sub-codebook when groups > 1)."""
        return self._nearest(self.prepare(z), group)

    def _nearest(self, z: torch.Tensor, group: torch.Tensor | None) -> torch.Tensor:
        """assign() for rows already prepared (l2-normalised when cosine)."""
        if self.cosine:
            dist = -z @ self.codes.T
        else:
            dist = (z * z).sum(1, keepdim=True) - 2 * z @ self.codes.T + (self.codes * self.codes).sum(1)[None]
        if self.groups > 1:
            if group is None:
                raise ValueError("a hierarchical codebook needs each input's group index")
            code_group = torch.arange(self.n_codes, device=z.device) // self.per_group
            dist = dist.masked_fill(code_group[None, :] != group[:, None], float("inf"))
        return dist.argmin(1)

    def forward(self, z: torch.Tensor, group: torch.Tensor | None = None):
        """(quantised z with straight-through gradient, code indices, commitment loss) for rows z (n, dim)."""
        zp = self.prepare(z)
        idx = self._nearest(zp.detach(), group)
        q = self.codes[idx]
        if self.training:
            self._update(zp.detach(), idx, group)
        commit = self.beta * F.mse_loss(zp, q.detach())
        return zp + (q - zp).detach(), idx, commit

    @torch.no_grad()
    def _update(self, z: torch.Tensor, idx: torch.Tensor, group: torch.Tensor | None) -> None:
        onehot = F.one_hot(idx, self.n_codes).type(z.dtype)
        self.ema_count.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
        self.ema_sum.mul_(self.decay).add_(onehot.T @ z, alpha=1 - self.decay)
        n = self.ema_count.sum()
        count = (self.ema_count + self.eps) / (n + self.n_codes * self.eps) * n
        codes = self.ema_sum / count[:, None]
        self.codes.copy_(F.normalize(codes, dim=1) if self.cosine else codes)
        self.used[idx] = True
        self.calls += 1
        if self.restart_every and int(self.calls) % self.restart_every == 0:
            self._restart(z, group)

    @torch.no_grad()
    def _restart(self, z: torch.Tensor, group: torch.Tensor | None) -> None:
        """Dead codes (unused since the last restart) take a random input of the batch (of their own group)."""
        for code in torch.nonzero(~self.used).flatten().tolist():
            rows = z if group is None else z[group == code // self.per_group]
            if len(rows):
                pick = rows[torch.randint(len(rows), (1,))][0]
                self.codes[code] = pick
                self.ema_sum[code] = pick
                self.ema_count[code] = 1.0
        self.used.zero_()


def encoder(in_ch: int, out_dim: int, width: int = 32) -> nn.Sequential:
    """16x16 images -> a 4x4 grid of out_dim vectors (conv3x3, then two stride-2 conv3x3, GELU between)."""
    return nn.Sequential(nn.Conv2d(in_ch, width // 2, 3, padding=1), nn.GELU(),
                         nn.Conv2d(width // 2, width, 3, stride=2, padding=1), nn.GELU(),
                         nn.Conv2d(width, out_dim, 3, stride=2, padding=1))


def decoder(in_dim: int, out_ch: int, width: int = 32) -> nn.Sequential:
    """A 4x4 grid of in_dim vectors -> 16x16 images in [0, 1] (two stride-2 transposed convs, then conv3x3)."""
    return nn.Sequential(nn.Conv2d(in_dim, width, 3, padding=1), nn.GELU(),
                         nn.ConvTranspose2d(width, width, 4, stride=2, padding=1), nn.GELU(),
                         nn.ConvTranspose2d(width, width // 2, 4, stride=2, padding=1), nn.GELU(),
                         nn.Conv2d(width // 2, out_ch, 3, padding=1), nn.Sigmoid())


def grid_rows(x: torch.Tensor) -> torch.Tensor:
    """(b, c, h, w) -> (b*h*w, c): one row per grid cell (patch), row-major."""
    return x.permute(0, 2, 3, 1).reshape(-1, x.shape[1])


def rows_grid(rows: torch.Tensor, b: int, h: int, w: int) -> torch.Tensor:
    """The inverse of grid_rows."""
    return rows.reshape(b, h, w, -1).permute(0, 3, 1, 2)
