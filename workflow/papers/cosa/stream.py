"""Leakage-free test-time-adaptation stream (TAFAS/COSA protocol) and the adapters compared in ``cosa``.

COSA (Im & Kwon, ICLR 2026) refines the prediction ``Y0 in R^{H x C}`` of a *frozen* forecaster with one
output-space module (per channel c, one weight matrix shared across channels by default):

    Yhat_c = Y0_c + tanh(g) * ( W [Y0_c ; C_t] + b ),      W in R^{H x (H+K)},  b in R^H,  g in R,

initialised g = 0 (the adapter starts as the identity), W ~ xavier_uniform(gain 0.1), b = 0. The context
``C_t in R^K`` holds the ground-truth means (over batch x horizon x channels) of the last K *fully
matured* prediction batches, most recent first, padded with the oldest of them, zeros before any batch
has matured. Adaptation loss (only adapter parameters theta = {W, b, g} are trained):

    L(theta) = sum_{observed (j,h,c)} (Yhat - Y)^2 / (#observed) + l2_reg * ||theta||_2^2,

optimised with Adam (coupled weight decay 1e-4 as in the official run script), gradient-norm clipping
(0.1, or max(0.05, min(0.5, loss)) in the official "fast" mode) and CALR (see ``CALR``).

Stream (TAFAS, Kim et al. AAAI 2025; reused by COSA). Windows ``t = s, s+1, ...`` (forecast start; input
``x[t-L:t]``, target ``x[t:t+H]``, full horizon inside the segment) are processed in order, in batches of
size ``B = P * period_n + 1`` where ``P = L // argmax_f |rfft(x_first - mean)|`` on the highest-power
channel of the batch's first look-back window (PAAS). Time bookkeeping: ``obs_end`` is the number of
observed series values (indices ``< obs_end`` are observed; the official ``cur_step`` is ``obs_end - 1``).
A batch whose last window starts at ``t_B`` is processed when ``obs_end = t_B`` (its last input value just
arrived). For every batch:

1. base prediction ``Y0`` (frozen base, no grad);
2. drain: every earlier batch whose horizon end ``t_B' + H <= obs_end`` is fully observed -> its GT mean
   is pushed into the context buffer (and, ``last_error``, its mean residual is stored); with full-GT
   steps enabled, ``steps`` adaptation steps with full MSE are run on it (with the context it used);
3. prediction with the adapter and the current context;
4. partial (POGT) adaptation: sample j has ``min(B-1-j, H)`` already-observed leading steps -> ``steps``
   masked-MSE steps on exactly those entries;
5. ``_adjust_prediction``: observed entries keep the adapter output of the last adaptation step, the
   not-yet-observed entries are replaced by the post-update adapter output;
6. metrics (MSE, MAE) of the full horizon against the ground truth.

Everything the stream *reads* (inputs, GT for adaptation/context/residuals, PAAS) comes from a view of the
series that, with ``mask_future=True``, has every value at index ``>= obs_end`` replaced by NaN; only the
metrics read the true future. Predictions are bit-identical with and without the mask (the K4 check).

Two variants exist only as negative controls: ``cosa_stale_gt`` (the adapter learns from the ground truth of
random *training* windows instead of the stream's: no test-time signal) and ``cosa_leak_one_step`` (the
partial step reads one unobserved value per sample: a leak the K4 check must flag). Two exist only as placebos:
``cosa_flip_resid`` (every ground truth the adapter reads is ``Y0 + s (Y - Y0)`` with a seeded random sign ``s`` per
window: the observed error keeps its size but loses its direction), ``cosa_shuffled_ctx`` (the context holds the
means of K matured batches drawn at random from all matured so far, not the last K: recency made inert) and
``cosa_input_gcm`` (COSA's adapter behind TAFAS's input module: ``Yhat = adapter(f(GCM_in(X)), C)``, so that every
step back-propagates through the frozen base, as TAFAS does).

No file I/O, no printing; deterministic given ``seed`` (run with ``torch.set_num_threads(1)``).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque

import numpy as np
import torch
import torch.nn as nn

from .models import gather_windows, window_starts

__all__ = [
    "METHODS",
    "paas_period",
    "ContextBuffer",
    "CALR",
    "OutputAdapter",
    "GCM",
    "TafasLite",
    "CosaInputGcm",
    "partial_mask",
    "run_stream",
    "select_hparams",
]

METHODS = ("no_tta", "last_error", "cosa", "cosa_no_ctx", "cosa_no_gate", "cosa_no_pogt", "cosa_no_calr",
           "tafas_lite", "cosa_stale_gt", "cosa_leak_one_step", "cosa_flip_resid", "cosa_shuffled_ctx",
           "cosa_input_gcm")

# method -> (context used, gate, full-GT drain steps, partial-GT steps, CALR; optional: stale, lookahead)
_COSA = dict(ctx=True, gate=True, full=True, partial=True, calr=True)
_COSA_VARIANTS = {
    "cosa": _COSA,
    "cosa_no_ctx": _COSA | dict(ctx=False),
    "cosa_no_gate": _COSA | dict(gate=False),
    "cosa_no_pogt": _COSA | dict(partial=False),
    "cosa_no_calr": _COSA | dict(calr=False),
    # negative control of the gain claims: the same adapter, steps and tuning, but every ground-truth window it
    # reads (adaptation targets and context means) is that of a random window of ``stale_pool`` (the training
    # segment, which the frozen base already fits): the test-time signal the mechanism learns from is removed
    "cosa_stale_gt": _COSA | dict(stale=True),
    # faulty variant for the leakage check (K4): the partial-GT step also reads the first not-yet-observed value
    # of every sample (the off-by-one of the official ``cur_step = obs_end - 1`` bookkeeping)
    "cosa_leak_one_step": _COSA | dict(lookahead=1),
    # placebo of the gain claims: every ground-truth window the adapter reads is the frozen base's prediction plus the
    # window's own residual with a random sign (a seeded +-1 per window): the same residual sizes, loss scale, steps
    # and tuning, but the direction of the observed error (the test-time signal) is made inert
    "cosa_flip_resid": _COSA | dict(flip=True),
    # placebo of the claim against TAFAS: the context vector holds K ground-truth means drawn at random (seeded) from
    # every batch matured so far instead of the last K: the same values, parameters and input scale, recency made inert
    "cosa_shuffled_ctx": _COSA | dict(shuffle_ctx=True),
    # placebo of the speed claim: COSA's output adapter behind TAFAS's input calibration module (GCM on the look-back
    # window), so that every step back-propagates through the frozen base as TAFAS does: the output-only design, the
    # ingredient the speed claim credits, replaced by the comparator's version of it; COSA's adapter, context,
    # CALR, steps and tuning kept
    "cosa_input_gcm": _COSA | dict(input_gcm=True),
}


# --------------------------------------------------------------------------------------------- PAAS
def paas_period(window, default: int = 24) -> int:
    """PAAS period of a look-back window ``(L, C)`` (or ``(L,)``).

    ``A = |rfft(x - mean_t x)|`` along time; channel ``c* = argmax_c mean_f A[f, c]^2``;
    ``f* = argmax_f A[f, c*]``; ``P = L // f*``. ``f* = 0`` (constant window: the official code divides by
    zero and falls back) returns ``default`` (24, the official fallback).
    """
    x = np.asarray(window, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    amp = np.abs(np.fft.rfft(x - x.mean(axis=0, keepdims=True), axis=0))
    power = (amp ** 2).mean(axis=0)
    f = int(np.argmax(amp[:, int(np.argmax(power))]))
    if f == 0 or not np.isfinite(amp).all():
        return int(default)
    return max(1, x.shape[0] // f)


# ------------------------------------------------------------------------------------ context buffer
class ContextBuffer:
    """GT means of matured batches; ``vector()`` = last K, most recent first, padded with the oldest of
    those K, all zeros while empty (official ``_get_context_vector``)."""

    def __init__(self, size: int, maxlen: int = 200):
        self.size = int(size)
        self.history: deque[float] = deque(maxlen=maxlen)

    def push(self, value: float) -> None:
        self.history.append(float(value))

    def vector(self) -> np.ndarray:
        k = self.size
        if k == 0:
            return np.zeros(0)
        if not self.history:
            return np.zeros(k)
        vals = [self.history[-(i + 1)] for i in range(min(k, len(self.history)))]
        vals += [vals[-1]] * (k - len(vals))
        return np.asarray(vals, dtype=np.float64)


# ---------------------------------------------------------------------------------------------- CALR
class CALR:
    """Cosine-adaptive learning rate (official ``_adaptive_learning_rate``), called once per step with
    the step's loss (incl. the L2 term):

    * step 0 (per-batch reset): ``lr = base_lr``;
    * otherwise, over the last <= 3 recorded losses (history shared across batches, maxlen 5),
      ``trend = l[-1] - l[0]``, ``var`` = unbiased variance:
      ``trend > 0 and var < 1e-6 -> lr = min(1.2 lr, max_lr)``; ``trend < -0.01 -> lr = min(1.05 lr, max_lr)``;
      ``|trend| < 1e-6 -> lr = max(0.8 lr, min_lr)``; then (step >= 1)
      ``lr = min_lr + (lr - min_lr) * (1 + cos(pi * step / steps)) / 2`` (stored, so it compounds).
    """

    def __init__(self, base_lr: float, max_lr: float = 5e-3, min_lr: float = 1e-4, history: int = 5):
        self.base_lr, self.max_lr, self.min_lr = base_lr, max_lr, min_lr
        self.current = base_lr
        self.loss_history: deque[float] = deque(maxlen=history)

    def __call__(self, loss: float, step: int, steps: int) -> float:
        if step == 0:
            self.current = self.base_lr
            self.loss_history.append(loss)
            return self.current
        self.loss_history.append(loss)
        recent = list(self.loss_history)[-3:]
        if len(recent) < 2:
            return self.current
        trend = recent[-1] - recent[0]
        var = float(np.var(recent, ddof=1))
        if trend > 0 and var < 1e-6:
            self.current = min(self.current * 1.2, self.max_lr)
        elif trend < -0.01:
            self.current = min(self.current * 1.05, self.max_lr)
        elif abs(trend) < 1e-6:
            self.current = max(self.current * 0.8, self.min_lr)
        if step >= 1:
            cos = 0.5 * (1.0 + math.cos(step * math.pi / steps))
            self.current = self.min_lr + (self.current - self.min_lr) * cos
        return self.current


# ------------------------------------------------------------------------------------------ adapters
class OutputAdapter(nn.Module):
    """COSA output adapter ``Yhat = Y0 + tanh(g) * (W [Y0_c ; C] + b)`` (per channel c).

    ``var_wise=False`` (default): one W (H x (H+K)), b, scalar g shared by all channels;
    ``var_wise=True``: per-channel W_c, b_c, g_c. ``gate=False``: tanh(g) == 1 (ablation ``-gate``).
    """

    def __init__(self, horizon: int, context_size: int, channels: int = 1, var_wise: bool = False,
                 gate: bool = True, seed: int = 0):
        super().__init__()
        self.horizon, self.context_size, self.channels, self.var_wise = horizon, context_size, channels, var_wise
        in_dim = horizon + context_size
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if var_wise:
                w = torch.empty(channels, horizon, in_dim)
                for c in range(channels):
                    nn.init.xavier_uniform_(w[c], gain=0.1)
                self.weight = nn.Parameter(w)
                self.bias = nn.Parameter(torch.zeros(channels, horizon))
            else:
                w = torch.empty(horizon, in_dim)
                nn.init.xavier_uniform_(w, gain=0.1)
                self.weight = nn.Parameter(w)
                self.bias = nn.Parameter(torch.zeros(horizon))
        if gate:
            self.gate = nn.Parameter(torch.zeros(channels if var_wise else 1))
        else:
            self.gate = None

    def gate_value(self) -> float:
        return 1.0 if self.gate is None else float(torch.tanh(self.gate.detach()).mean())

    def forward(self, y0: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        b, h, c = y0.shape
        yc = y0.transpose(1, 2)                                   # (B, C, H)
        if self.context_size > 0:
            inp = torch.cat([yc, ctx.to(y0.dtype).expand(b, c, -1)], dim=-1)  # (B, C, H+K)
        else:
            inp = yc
        if self.var_wise:
            corr = torch.einsum("bci,coi->bco", inp, self.weight) + self.bias
        else:
            corr = inp @ self.weight.T + self.bias
        corr = corr.transpose(1, 2)                               # (B, H, C)
        if self.gate is None:
            return y0 + corr
        return y0 + torch.tanh(self.gate) * corr


class GCM(nn.Module):
    """TAFAS gated calibration module ``z' = z + tanh(alpha) (.) (z W + b)`` over the time axis.

    Per-variable (TAFAS default ``GCM_VAR_WISE=True``): ``W in R^{T x T x C}`` zero-initialised,
    ``b in R^{T x C}`` zeros, ``alpha in R^C`` initialised to ``gating_init = 0.01``.
    """

    def __init__(self, window: int, channels: int, gating_init: float = 0.01):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(window, window, channels))
        self.bias = nn.Parameter(torch.zeros(window, channels))
        self.gating = nn.Parameter(gating_init * torch.ones(channels))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        corr = torch.einsum("biv,iov->bov", z, self.weight) + self.bias
        return z + torch.tanh(self.gating) * corr


class CosaInputGcm(nn.Module):
    """The speed placebo: COSA's output adapter on the base's output for a calibrated input,
    ``Yhat = adapter(f_base(GCM_in(X)), C)`` (TAFAS's input module, so the base is back-propagated through)."""

    def __init__(self, lookback: int, channels: int, adapter: OutputAdapter, gating_init: float = 0.01):
        super().__init__()
        self.in_cali = GCM(lookback, channels, gating_init)
        self.adapter = adapter

    def gate_value(self) -> float:
        return self.adapter.gate_value()

    def forward(self, base: nn.Module, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        return self.adapter(base(self.in_cali(x)), ctx)


class TafasLite(nn.Module):
    """TAFAS-lite: ``Yhat = GCM_out( f_base( GCM_in(X) ) )`` with the frozen base in the middle."""

    def __init__(self, lookback: int, horizon: int, channels: int, gating_init: float = 0.01):
        super().__init__()
        self.in_cali = GCM(lookback, channels, gating_init)
        self.out_cali = GCM(horizon, channels, gating_init)

    def gate_value(self) -> float:
        return float(torch.tanh(self.out_cali.gating.detach()).mean())

    def forward(self, base: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return self.out_cali(base(self.in_cali(x)))


# ----------------------------------------------------------------------------------------- helpers
def partial_mask(batch_size: int, horizon: int, lookahead: int = 0) -> torch.Tensor:
    """(B, H) bool, row j has its first ``min(B-1-j, H)`` entries True (already observed steps).

    ``lookahead > 0`` is a deliberate bug (the leaky control): ``lookahead`` unobserved steps more per row.
    """
    obs = torch.clamp(batch_size - 1 - torch.arange(batch_size) + lookahead, 0, horizon)
    return torch.arange(horizon)[None, :] < obs[:, None]


def _adapt_steps(params, opt, calr, fwd, gt, mask, steps, l2_reg, grad_clip, conv_thr, losses):
    """``steps`` Adam steps on ``MSE(masked) + l2_reg ||theta||^2``; returns the last forward (detached).

    Masked entries of ``gt`` are replaced by 0 *before* the difference (``torch.where``), so NaNs in the
    unobserved part can never reach the loss or the gradient.
    """
    if mask is not None:
        m = mask[..., None]
        gt = torch.where(m, gt, torch.zeros((), dtype=gt.dtype))
        mf = m.to(gt.dtype)
        denom = mf.sum() * gt.shape[-1]
    last = None
    for step in range(steps):
        out = fwd()
        last = out.detach()
        if mask is None:
            loss = ((out - gt) ** 2).mean()
        else:
            loss = (((out - gt) ** 2) * mf).sum() / denom
        if l2_reg:
            loss = loss + l2_reg * sum(p.pow(2).sum() for p in params)
        lv = float(loss.detach())
        losses.append(lv)
        if calr is not None:
            lr = calr(lv, step, steps)
            for g in opt.param_groups:
                g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip = grad_clip if grad_clip is not None else max(0.05, min(0.5, lv))
        torch.nn.utils.clip_grad_norm_(params, max_norm=clip)
        opt.step()
        h = calr.loss_history if calr is not None else ()
        if calr is not None and step > 2 and len(h) >= 2 and abs(h[-1] - h[-2]) < conv_thr:
            break
    return last


# ------------------------------------------------------------------------------------------- stream
def run_stream(base: nn.Module, series, segment: tuple[int, int], lookback: int, horizon: int, method: str,
               lr: float = 1e-3, steps: int = 3, context_size: int = 5, l2_reg: float = 1e-4, seed: int = 0,
               mask_future: bool = False, *, batch_size: int | None = None, period_n: int = 1,
               default_period: int = 24, max_lr: float = 5e-3, min_lr: float = 1e-4,
               grad_clip: float | None = 0.1, weight_decay: float = 1e-4, convergence_threshold: float = 1e-4,
               var_wise: bool = False, official_adjust: bool = False, return_predictions: bool = False,
               stale_pool: tuple[int, int] | None = None) -> dict:
    """Run the leakage-free TTA stream of ``method`` over the windows whose forecast starts in ``segment``.

    Windows: forecast start ``t in [max(s, L), e - H]`` (full horizon inside the segment, input may reach
    back before ``s``). ``batch_size=None`` uses PAAS (``P * period_n + 1``), an int fixes the batch size
    (official COSA-F). ``grad_clip=None`` uses the official fast-mode rule ``max(0.05, min(0.5, loss))``.
    ``official_adjust=True`` reproduces the official ``_adjust_prediction`` loop ``for i in range(B-1)``
    (the last sample of the batch keeps the pre-final-update output; the replaced span starts at
    ``min(B-1, H) - i``); the default replaces exactly the unobserved entries of every sample.
    ``stale_pool`` (needed by ``cosa_stale_gt`` only): the range whose windows (drawn with ``seed``) replace
    every ground truth the adapter reads.

    The base is put in eval mode and frozen in place (``requires_grad=False``); its weights are never
    written. Returns ``{"mse", "mae", "window_mse", "window_mae", "seconds", "seconds_per_window",
    "adapter_params", "base_params", "gate", "context", "n_windows", "batch_sizes", "losses",
    "trainable", "method", "lr", "steps"}`` (+ ``"predictions"`` (n_windows, H, C) if requested).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    x = torch.as_tensor(np.asarray(series), dtype=torch.float32)
    if x.ndim == 1:
        x = x[:, None]
    n, n_ch = x.shape
    L, H = int(lookback), int(horizon)
    starts = torch.as_tensor(window_starts(segment, L, H, input_floor=0))
    n_win = len(starts)
    if n_win == 0:
        raise ValueError("segment holds no complete window")
    t_first = int(starts[0])

    base.eval()
    for p in base.parameters():
        p.requires_grad_(False)
    base_params = sum(p.numel() for p in base.parameters())

    variant = _COSA_VARIANTS.get(method)
    stale = bool(variant and variant.get("stale"))
    flip = bool(variant and variant.get("flip"))
    shuffle_ctx = bool(variant and variant.get("shuffle_ctx"))
    lookahead = int(variant.get("lookahead", 0)) if variant else 0
    if flip or shuffle_ctx:
        placebo_draw = torch.Generator().manual_seed(seed)
    if stale:
        pool = torch.as_tensor(window_starts(stale_pool or (0, 0), L, H, input_floor=0))
        if len(pool) == 0:
            raise ValueError(f"{method} needs stale_pool: a range holding complete windows (the training segment)")
        draw = torch.Generator().manual_seed(seed)
    adapter: nn.Module | None = None
    if variant is not None:
        k = context_size if variant["ctx"] else 0
        adapter = OutputAdapter(H, k, n_ch, var_wise=var_wise, gate=variant["gate"], seed=seed)
        use_full, use_partial, use_calr = variant["full"], variant["partial"], variant["calr"]
        fwd_fn = lambda y0, xin, ctx: adapter(y0, ctx)  # noqa: E731
        if variant.get("input_gcm"):
            adapter = CosaInputGcm(L, n_ch, adapter)
            fwd_fn = lambda y0, xin, ctx: adapter(base, xin, ctx)  # noqa: E731
    elif method == "tafas_lite":
        k = 0
        adapter = TafasLite(L, H, n_ch)
        use_full, use_partial, use_calr = True, True, False
        fwd_fn = lambda y0, xin, ctx: adapter(base, xin)  # noqa: E731
    else:
        k = 0
        use_full = use_partial = use_calr = False
        fwd_fn = None
    params = [p for p in adapter.parameters()] if adapter is not None else []
    for p in params:
        p.requires_grad_(True)
    trainable = [n_ for n_, _ in adapter.named_parameters()] if adapter is not None else []
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay) if params else None
    calr = CALR(lr, max_lr=max_lr, min_lr=min_lr) if use_calr else None
    buffer = ContextBuffer(k)

    def view(limit: int) -> torch.Tensor:
        if not mask_future:
            return x
        v = x.clone()
        v[limit:] = float("nan")
        return v

    def learned_truth(src: torch.Tensor, t_starts: torch.Tensor, y0: torch.Tensor) -> torch.Tensor:
        """The ground truth the adapter learns from: its windows', or (stale control) random pool windows', or
        (flip placebo) the base prediction ``y0`` plus the windows' residuals with a random sign per window."""
        if stale:
            t_starts = pool[torch.randint(len(pool), (len(t_starts),), generator=draw)]
        truth = gather_windows(src, t_starts, L, H)[1]
        if flip:
            sign = torch.randint(2, (len(t_starts), 1, 1), generator=placebo_draw).to(truth.dtype) * 2 - 1
            truth = y0 + sign * (truth - y0)
        return truth

    def context() -> np.ndarray:
        """The context vector: the last K matured means, or (shuffled placebo) K drawn at random from all of them."""
        if not (shuffle_ctx and buffer.history and k):
            return buffer.vector()
        hist = list(buffer.history)
        return np.asarray([hist[i] for i in torch.randint(len(hist), (k,), generator=placebo_draw).tolist()])

    pending: OrderedDict[int, dict] = OrderedDict()
    last_resid = torch.zeros(H, n_ch)
    preds, wmse, wmae, gates, ctxs, bsizes, losses = [], [], [], [], [], [], []
    k0, b_idx = 0, 0
    t_start = time.perf_counter()
    with torch.no_grad():
        while k0 < n_win:
            t0w = t_first + k0
            if batch_size is None:
                first_in = view(t0w)[t0w - L:t0w]
                bs = paas_period(first_in.numpy(), default=default_period) * period_n + 1
            else:
                bs = int(batch_size)
            bs = min(bs, n_win - k0)
            t_b = starts[k0:k0 + bs]
            obs_end = int(t_b[-1])                  # values with index < obs_end are observed
            src = view(obs_end)
            x_in = gather_windows(src, t_b, L, H)[0]
            y0 = base(x_in)                          # (1) frozen base prediction

            # (2) drain fully matured batches
            while pending and obs_end >= next(iter(pending.values()))["end"]:
                _, item = pending.popitem(last=False)
                gt = learned_truth(src, item["starts"], item["y0"])
                buffer.push(float(gt.mean()))
                last_resid = (gt - item["y0"]).mean(dim=0)
                if use_full and opt is not None:
                    with torch.enable_grad():
                        _adapt_steps(params, opt, calr,
                                     lambda it=item: fwd_fn(it["y0"], it["x"], it["ctx"]),
                                     gt, None, steps, l2_reg, grad_clip, convergence_threshold, losses)

            # (3) prediction with the current context
            ctx = torch.as_tensor(context(), dtype=torch.float32)
            if fwd_fn is not None:
                pred = fwd_fn(y0, x_in, ctx)
            elif method == "last_error":
                pred = y0 + last_resid
            else:
                pred = y0
            pending[b_idx] = {"starts": t_b, "y0": y0, "x": x_in, "ctx": ctx, "end": obs_end + H}

            # (4) partial adaptation on already-observed leading steps, (5) adjust the unobserved part
            n_obs = min(bs - 1 + lookahead, H)
            if use_partial and opt is not None and n_obs > 0:
                mask = partial_mask(bs, H, lookahead)
                gt_p = learned_truth(src, t_b, y0)
                with torch.enable_grad():
                    last = _adapt_steps(params, opt, calr, lambda: fwd_fn(y0, x_in, ctx), gt_p, mask, steps,
                                        l2_reg, grad_clip, convergence_threshold, losses)
                post = fwd_fn(y0, x_in, ctx)
                if official_adjust:
                    pred = last.clone()
                    for i in range(bs - 1):
                        st = max(n_obs - i, 0)
                        pred[i, st:] = post[i, st:]
                else:
                    pred = torch.where(mask[..., None], last, post)

            # (6) metrics on the full horizon (the only place that reads the true future)
            truth = gather_windows(x, t_b, L, H)[1]
            err = pred - truth
            wmse.append((err ** 2).mean(dim=(1, 2)))
            wmae.append(err.abs().mean(dim=(1, 2)))
            if return_predictions:
                preds.append(pred.clone())
            if adapter is not None:
                gates.append(adapter.gate_value())
            ctxs.append([float(v) for v in ctx])
            bsizes.append(bs)
            k0 += bs
            b_idx += 1
    seconds = time.perf_counter() - t_start
    window_mse = torch.cat(wmse).double().numpy()
    window_mae = torch.cat(wmae).double().numpy()
    out = {
        "method": method, "lr": lr, "steps": steps,
        "mse": float(window_mse.mean()), "mae": float(window_mae.mean()),
        "window_mse": window_mse, "window_mae": window_mae,
        "seconds": seconds, "seconds_per_window": seconds / n_win,
        "adapter_params": int(sum(p.numel() for p in params)), "base_params": int(base_params),
        "gate": gates, "context": ctxs, "n_windows": int(n_win), "batch_sizes": bsizes,
        "losses": losses, "trainable": trainable,
    }
    if return_predictions:
        out["predictions"] = torch.cat(preds).numpy()
    return out


def select_hparams(base: nn.Module, series, val_segment: tuple[int, int], lookback: int, horizon: int,
                   method: str, lrs=(3e-4, 1e-3, 3e-3), steps_grid=(1, 3, 5), **kw) -> dict:
    """Grid search of (lr, steps) by running the same stream over the *validation* segment only.

    Picks the lowest finite validation MSE (first in grid order on ties). Methods without
    hyper-parameters (``no_tta``, ``last_error``) run once and return ``lr = steps = None``.
    """
    if method in ("no_tta", "last_error"):
        r = run_stream(base, series, val_segment, lookback, horizon, method, **kw)
        return {"lr": None, "steps": None, "val_mse": r["mse"], "val_mae": r["mae"],
                "grid": [{"lr": None, "steps": None, "val_mse": r["mse"], "val_mae": r["mae"]}]}
    grid = []
    for lr in lrs:
        for st in steps_grid:
            r = run_stream(base, series, val_segment, lookback, horizon, method, lr=lr, steps=st, **kw)
            v = r["mse"] if np.isfinite(r["mse"]) else float("inf")
            grid.append({"lr": lr, "steps": st, "val_mse": v, "val_mae": r["mae"], "seconds": r["seconds"]})
    best = min(grid, key=lambda g: g["val_mse"])
    return {"lr": best["lr"], "steps": best["steps"], "val_mse": best["val_mse"], "val_mae": best["val_mae"],
            "grid": grid}
