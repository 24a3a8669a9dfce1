"""Base forecasters for the ``cosa`` reproduction and their (pre-test-time) training.

Two channel-independent forecasters mapping a look-back window ``X in R^{L x C}`` to a forecast
``Y in R^{H x C}`` (tensors are ``(batch, time, channel)``):

* **DLinear** (Zeng et al., 2023): moving-average decomposition with kernel 25 and replicate padding,

      T = AvgPool_25(pad(X)),   S = X - T,   Y = W_s S + b_s + W_t T + b_t,

  with one ``Linear(L -> H)`` per component shared across channels (``individual=False``); weights
  initialised to ``1/L`` as in the Time-Series-Library implementation.
* **MLP + RevIN** (Kim et al., 2022): per-instance, per-channel normalisation

      x~ = gamma * (x - mu) / sqrt(var + eps) + beta,     y = (y~ - beta) / (gamma + eps^2) * sigma + mu,

  around a 2-layer channel-shared MLP ``Linear(L -> d) -> ReLU -> Linear(d -> H)``.

Training (``train_base``): MSE, Adam, mini-batches of windows whose input and full horizon lie in the
train range; early stopping on the mean MSE of the validation windows (forecast start inside the val
range, full horizon inside it, input may reach back into train); the model ends with its best weights.

No printing, no file I/O but ``load_base`` (reads a checkpoint); deterministic given ``seed`` (one torch thread).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch
import torch.nn as nn

from workflow.lib.training import EarlyStopping  # shared by every paper that trains with a validation split

__all__ = ["DLinear", "RevIN", "MLPRevIN", "make_base", "load_base", "train_base", "window_starts", "gather_windows"]


class DLinear(nn.Module):
    """DLinear with moving-average (kernel 25) trend/seasonal decomposition, channel-shared heads."""

    def __init__(self, lookback: int, horizon: int, kernel: int = 25):
        super().__init__()
        self.lookback, self.horizon, self.kernel = lookback, horizon, kernel
        self.linear_seasonal = nn.Linear(lookback, horizon)
        self.linear_trend = nn.Linear(lookback, horizon)
        with torch.no_grad():
            self.linear_seasonal.weight.fill_(1.0 / lookback)
            self.linear_trend.weight.fill_(1.0 / lookback)

    def decompose(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, L, C) -> (seasonal, trend), trend = centred moving average with replicate padding."""
        half = (self.kernel - 1) // 2
        front = x[:, :1, :].expand(-1, half, -1)
        end = x[:, -1:, :].expand(-1, self.kernel - 1 - half, -1)
        xp = torch.cat([front, x, end], dim=1)
        trend = nn.functional.avg_pool1d(xp.transpose(1, 2), self.kernel, stride=1).transpose(1, 2)
        return x - trend, trend

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seasonal, trend = self.decompose(x)
        out = self.linear_seasonal(seasonal.transpose(1, 2)) + self.linear_trend(trend.transpose(1, 2))
        return out.transpose(1, 2)


class RevIN(nn.Module):
    """Reversible instance normalisation (affine), statistics over the time axis of each instance."""

    def __init__(self, channels: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def norm(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        mu = x.mean(dim=1, keepdim=True).detach()
        sigma = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + self.eps).detach()
        return (x - mu) / sigma * self.weight + self.bias, (mu, sigma)

    def denorm(self, y: torch.Tensor, stats: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        mu, sigma = stats
        return (y - self.bias) / (self.weight + self.eps * self.eps) * sigma + mu


class MLPRevIN(nn.Module):
    """RevIN -> channel-shared 2-layer MLP over the time axis -> RevIN^-1."""

    def __init__(self, lookback: int, horizon: int, channels: int, hidden: int = 256):
        super().__init__()
        self.revin = RevIN(channels)
        self.mlp = nn.Sequential(nn.Linear(lookback, hidden), nn.ReLU(), nn.Linear(hidden, horizon))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xn, stats = self.revin.norm(x)
        y = self.mlp(xn.transpose(1, 2)).transpose(1, 2)
        return self.revin.denorm(y, stats)


def make_base(kind: str, lookback: int, horizon: int, channels: int, seed: int = 0,
              hidden: int = 256) -> nn.Module:
    """Build a base forecaster; ``kind`` in {"dlinear", "mlp"} ("mlp" = 2-layer MLP with RevIN).

    Initialisation uses ``seed`` inside a forked RNG, so the global torch RNG is left untouched.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if kind == "dlinear":
            return DLinear(lookback, horizon)
        if kind == "mlp":
            return MLPRevIN(lookback, horizon, channels, hidden=hidden)
    raise ValueError(f"unknown base kind {kind!r}; expected 'dlinear' or 'mlp'")


def load_base(path) -> nn.Module:
    """Rebuild a frozen base from a tensors-only checkpoint (``workflow.core.io.save_state``; no arbitrary
    unpickling), in eval mode."""
    from workflow.core.io import load_state

    ckpt = load_state(path)
    meta = ckpt["meta"]
    model = make_base(meta["kind"], meta["lookback"], meta["horizon"], meta["channels"])
    model.load_state_dict(ckpt["state_dict"])
    return model.eval()


def window_starts(rng: tuple[int, int], lookback: int, horizon: int, input_floor: int = 0) -> np.ndarray:
    """Forecast start indices t with t in [start, end - H] and t - L >= input_floor.

    Window t reads input ``series[t-L:t]`` and target ``series[t:t+H]``.
    """
    start, end = int(rng[0]), int(rng[1])
    lo = max(start, input_floor + lookback)
    hi = end - horizon
    if hi < lo:
        return np.zeros(0, dtype=np.int64)
    return np.arange(lo, hi + 1, dtype=np.int64)


def gather_windows(x: torch.Tensor, starts: torch.Tensor, lookback: int, horizon: int):
    """x (n, C), starts (B,) -> inputs (B, L, C) = x[t-L:t], targets (B, H, C) = x[t:t+H]."""
    ar_in = torch.arange(-lookback, 0)
    ar_out = torch.arange(horizon)
    return x[starts[:, None] + ar_in], x[starts[:, None] + ar_out]


def _eval_mse(model, x, starts, lookback, horizon, batch_size):
    if len(starts) == 0:
        return float("nan")
    tot, cnt = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(starts), batch_size):
            s = starts[i:i + batch_size]
            xb, yb = gather_windows(x, s, lookback, horizon)
            tot += float(((model(xb) - yb) ** 2).mean()) * len(s)
            cnt += len(s)
    return tot / cnt


def train_base(model: nn.Module, series: np.ndarray, split: dict, lookback: int, horizon: int,
               epochs: int, lr: float = 1e-3, batch_size: int = 256, patience: int = 3, seed: int = 0,
               progress: Callable[[int, float, float], None] | None = None) -> dict:
    """Train ``model`` with MSE + Adam on train windows, early-stopping on val-window MSE.

    Train windows: input and full horizon inside ``split["train"]``. Val windows: forecast start and full
    horizon inside ``split["val"]`` (input may reach back into train). Shuffling uses a generator seeded
    with ``seed``. ``progress(epoch, train_loss, val_loss)`` is called after every epoch.
    Training stops after ``patience`` epochs without val improvement; best weights are restored, gradients
    cleared (``.grad = None``) and the model is left in eval mode.

    Returns ``{"train_loss": [...], "val_loss": [...], "best_epoch", "best_val", "epochs_run",
    "seconds", "n_train_windows", "n_val_windows"}``.
    """
    t0 = time.perf_counter()
    x = torch.as_tensor(np.asarray(series), dtype=torch.float32)
    tr, va = split["train"], split["val"]
    tr_starts = torch.as_tensor(window_starts(tr, lookback, horizon, input_floor=tr[0]))
    va_starts = torch.as_tensor(window_starts(va, lookback, horizon, input_floor=0))
    if len(tr_starts) == 0:
        raise ValueError("no training windows: train range shorter than lookback + horizon")
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    hist = {"train_loss": [], "val_loss": []}
    stopper = EarlyStopping(model, patience)
    for ep in range(epochs):
        model.train()
        perm = tr_starts[torch.randperm(len(tr_starts), generator=gen)]
        tot = 0.0
        for i in range(0, len(perm), batch_size):
            s = perm[i:i + batch_size]
            xb, yb = gather_windows(x, s, lookback, horizon)
            loss = ((model(xb) - yb) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * len(s)
        model.eval()
        tr_loss = tot / len(perm)
        va_loss = _eval_mse(model, x, va_starts, lookback, horizon, 1024)
        hist["train_loss"].append(tr_loss)
        hist["val_loss"].append(va_loss)
        if progress is not None:
            progress(ep, tr_loss, va_loss)
        if stopper.update(ep, va_loss if np.isfinite(va_loss) else tr_loss):
            break
    stopper.restore()
    model.zero_grad(set_to_none=True)
    model.eval()
    hist.update(best_epoch=stopper.best_epoch, best_val=stopper.best, epochs_run=len(hist["train_loss"]),
                seconds=time.perf_counter() - t0, n_train_windows=int(len(tr_starts)),
                n_val_windows=int(len(va_starts)))
    return hist
