"""The data sets of the ``cosa`` reproduction (COSA, Im & Kwon, ICLR 2026), numpy only (the prepare step imports
it without torch): ``ett_like`` (ETTh1-like 7-channel hourly generator with a distribution shift in the test
segment), ``chrono_split`` (60/20/20), ``zscore`` (train statistics), ``split_of`` (a prepared data file's split).

"COSA: Context-aware Output-Space Adapter for Test-Time Adaptation in Time Series Forecasting";
official code github.com/bigbases/COSA_ICLR2026 (built on TAFAS, github.com/kimanki/TAFAS). The paper's
library modules follow the miniature design of ``shared/papers/cosa.md`` section 5.3: the data (this module), the
base forecasters (``models.py``, torch: ``make_base`` ("dlinear", "mlp" = MLP + RevIN), ``train_base``,
``load_base``) and the method, test-time adaptation (``stream.py``, torch: ``paas_period``, ``run_stream``, the
leakage-free TAFAS/COSA stream for every entry of ``METHODS``, and ``select_hparams``, the validation-stream grid
search).

Pure functions, no file I/O, no printing; deterministic given the seeds.
"""

from __future__ import annotations

import numpy as np

from workflow.lib.timeseries import chrono_split  # shared with stbp (ETT/PEMS 60/20/20 convention)

__all__ = ["ett_like", "chrono_split", "zscore", "split_of", "SHIFTS"]

SHIFTS = ("level", "mixed", "none")


def split_of(data: dict) -> dict:
    """The chronological split stored in a prepared data file: {"train"|"val"|"test": (start, end)}."""
    return {k: tuple(int(v) for v in data[f"split_{k}"]) for k in ("train", "val", "test")}


def zscore(series, train_range) -> tuple[np.ndarray, dict]:
    """Per-channel z-score with train statistics: ``z = (x - mu_train) / sd_train`` (sd 0 -> 1).

    Returns ``(z, {"mean": (C,), "std": (C,)})``; a 1-D series is treated as one channel and stays 1-D.
    """
    x = np.asarray(series, dtype=np.float64)
    one_d = x.ndim == 1
    x2 = x[:, None] if one_d else x
    tr = x2[int(train_range[0]):int(train_range[1])]
    mu = tr.mean(axis=0)
    sd = tr.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    z = (x2 - mu) / sd
    return (z[:, 0] if one_d else z), {"mean": mu, "std": sd}


def _ar1(rng: np.random.Generator, n: int, k: int, phi: float, sd: float) -> np.ndarray:
    """k independent stationary AR(1) paths e_t = phi e_{t-1} + sd * N(0, 1)."""
    eps = rng.normal(0.0, sd, size=(n, k))
    out = np.empty((n, k))
    out[0] = eps[0] / np.sqrt(1.0 - phi ** 2)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + eps[t]
    return out


def ett_like(seed: int, n_steps: int = 8760, shift: str = "level", fractions=(0.6, 0.2, 0.2),
             val_shift: float = 0.0) -> np.ndarray:
    """ETTh1-like synthetic series, ``(n_steps, 7)`` float64, hourly, with a test-segment shift.

    Three latent load drivers ``d_k(t) = daily_k(t) + 0.5 weekly_k(t) + a_k(t)`` with
    ``daily_k(t) = sin(2 pi t/24 + phi_k) + 0.35 sin(4 pi t/24 + phi'_k)``,
    ``weekly_k(t) = sin(2 pi t/168 + psi_k)`` (phases = one common random phase + N(0, 0.4) jitter per
driver, so loads peak at similar hours) and ``a_k`` AR(1) (phi 0.95, sd 0.1).
    Six "load" channels are random positive combinations (rows of M sum to 1):

        x_c(t) = level_c(t) + A_c sum_k M_ck [daily_k + 0.5 weekly_k](t) + sum_k M_ck a_k(t) + e_c(t),

    ``A_c ~ U(0.6, 1.6)``, ``e_c`` AR(1) (phi 0.8, sd 0.1), and a slow level drift
    ``level_c(t) = mu_c + delta_c t/n + 0.1 sin(2 pi t/T_c + rho_c)`` (``delta_c ~ U(-0.2, 0.2)``,
    ``T_c ~ U(2000, 5000)`` h). Channel 7 ("oil temperature") is the lagged (3 h), exponentially smoothed
    (alpha 0.1) sum of the load deviations, rescaled to unit std, plus its own drift and AR(1) noise.

    Shift, test segment ``t >= b`` (``b`` = start of the last ``fractions[2]`` part, as ``chrono_split``),
    with ``sigma_c`` = std of channel c over the train part before the shift and ``dev = x - level``:

    * ``"level"`` (default): ``x = level + 1.3 dev + 0.8 sigma_c`` (persistent amplitude x1.3, level step);
    * ``"mixed"``: ``x = level + 1.3 dev + 0.5 sigma_c min(1, (t-b)/500)`` (ramp over 500 h) and the daily
      profile of load channels 0, 1, 2 moved 2 h later in the test segment;
    * ``"none"``: no shift (control).

    ``val_shift = v > 0`` (not in the spec; default 0 = spec) also shifts the validation segment
    ``a <= t < b`` by the same kind of transform with magnitudes scaled by v (amplitude ``1 + 0.3 v``, level
    ``0.8 v sigma`` / ramp ``0.5 v sigma``, no peak move), so that a validation-stream hyper-parameter
    search sees a drift at all.
    """
    if shift not in SHIFTS:
        raise ValueError(f"shift must be one of {SHIFTS}")
    rng = np.random.default_rng(seed)
    n = int(n_steps)
    split = chrono_split(n, fractions)
    a_end = split["train"][1]
    b = split["test"][0]
    t = np.arange(n, dtype=np.float64)
    n_lat, n_load = 3, 6

    # loads peak at similar hours / weekdays: driver phases jittered around a common phase
    phi_d = rng.uniform(0, 2 * np.pi) + rng.normal(0.0, 0.4, n_lat)
    phi_d2 = rng.uniform(0, 2 * np.pi) + rng.normal(0.0, 0.4, n_lat)
    psi_w = rng.uniform(0, 2 * np.pi) + rng.normal(0.0, 0.4, n_lat)
    lat_noise = _ar1(rng, n, n_lat, 0.95, 0.1)
    mix = rng.uniform(0.2, 1.0, (n_load, n_lat))
    mix /= mix.sum(axis=1, keepdims=True)
    amp = rng.uniform(0.6, 1.6, n_load)
    ch_noise = _ar1(rng, n, n_load, 0.8, 0.1)

    def seasonal(tt: np.ndarray) -> np.ndarray:  # (n, n_lat)
        tt = tt[:, None]
        daily = np.sin(2 * np.pi * tt / 24 + phi_d) + 0.35 * np.sin(4 * np.pi * tt / 24 + phi_d2)
        return daily + 0.5 * np.sin(2 * np.pi * tt / 168 + psi_w)

    seas = seasonal(t)
    dev = np.empty((n, 7))
    dev[:, :n_load] = amp * (seas @ mix.T) + lat_noise @ mix.T + ch_noise
    if shift == "mixed":
        # daily peak of channels 0-2 moved by 2 h in the test segment (weekly part unchanged)
        seas_late = seasonal(t - 2.0)
        moved = amp * (seas_late @ mix.T)
        dev[b:, :3] = moved[b:, :3] + (lat_noise @ mix.T)[b:, :3] + ch_noise[b:, :3]

    # channel 7: lagged (3 h) exponentially smoothed sum of the load deviations
    total = dev[:, :n_load].sum(axis=1)
    ema = np.empty(n)
    ema[0] = total[0]
    for i in range(1, n):
        ema[i] = 0.9 * ema[i - 1] + 0.1 * total[i]
    lagged = np.concatenate([np.full(3, ema[0]), ema[:-3]])
    lagged = (lagged - lagged[:a_end].mean()) / (lagged[:a_end].std() + 1e-12)
    dev[:, 6] = lagged + _ar1(rng, n, 1, 0.9, 0.05)[:, 0]

    mu = rng.normal(0.0, 1.0, 7)
    delta = rng.uniform(-0.2, 0.2, 7)
    period = rng.uniform(2000, 5000, 7)
    rho = rng.uniform(0, 2 * np.pi, 7)
    level = mu + delta * (t[:, None] / n) + 0.1 * np.sin(2 * np.pi * t[:, None] / period + rho)

    x = level + dev
    sigma = x[:a_end].std(axis=0)
    if val_shift and shift != "none":
        v = float(val_shift)
        if shift == "level":
            x[a_end:b] = level[a_end:b] + (1 + 0.3 * v) * dev[a_end:b] + 0.8 * v * sigma
        else:
            ramp_v = np.minimum(1.0, (t[a_end:b] - a_end) / 500.0)[:, None]
            x[a_end:b] = level[a_end:b] + (1 + 0.3 * v) * dev[a_end:b] + 0.5 * v * sigma * ramp_v
    if shift == "level":
        x[b:] = level[b:] + 1.3 * dev[b:] + 0.8 * sigma
    elif shift == "mixed":
        ramp = np.minimum(1.0, (t[b:] - b) / 500.0)[:, None]
        x[b:] = level[b:] + 1.3 * dev[b:] + 0.5 * sigma * ramp
    return x
