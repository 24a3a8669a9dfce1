"""Core algorithms for the ``adam_implicit_bias`` reproduction: the optimisers and the direction metrics.

Paper: Baek, Song, Yun, "Implicit Bias of Per-sample Adam on Separable Data: Departure from the
Full-batch Regime" (ICLR 2026, arXiv 2510.26303).  No official code exists; everything here follows
the miniature design of ``shared/papers/adam_implicit_bias.md`` (sections 1.2-1.4).

Setting: linearly separable binary data ``(x_i, y_i)``, ``y_i in {-1, +1}``, homogeneous linear model
``w``, logistic loss

    L(w) = (1/N) sum_i l(y_i x_i^T w),     l(z) = log(1 + e^{-z}),   l'(z) = -1/(1 + e^{z}).

Write ``a_i = y_i x_i``.  Then ``grad L_i(w) = l'(a_i^T w) a_i`` and ``log|l'(z)| = -softplus(z)``.

Pure numpy in float64, with no file I/O and no printing. The data generators and the reference
directions (max-margin solutions, which need cvxpy and scipy) are in ``references.py``, so that the
training step does not load the solvers.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = [
    "train",
    "log_steps",
    "cosine",
    "margin_ratios",
    "ALGORITHMS",
]

ALGORITHMS = ("adam", "signum", "adam_proxy", "gd")
PRECONDS = ("own", "full", "per_sample")  # whose second moment Adam divides by (the placebos: see ``train``)


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------

def cosine(a, b) -> float:
    """Cosine similarity ``a^T b / (||a||_2 ||b||_2)`` (0 if either vector is zero)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(a @ b / (na * nb))


def margin_ratios(w, X, y, gamma2, gamma_inf) -> dict:
    """Normalized margin ratios of a direction ``w`` (spec 1.3, "Metrics").

        r2   = min_i y_i x_i^T w / ||w||_2   / gamma_2^*
        rinf = min_i y_i x_i^T w / ||w||_inf / gamma_inf^*

    Both are <= 1 (up to solver accuracy) and tend to 1 iff ``w`` approaches the corresponding
    max-margin set; they are meaningful even when the max-margin solution is not unique
    (the l_inf solution on GR data usually is not).
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    m = float(np.min(y * (X @ w)))
    n2 = float(np.linalg.norm(w))
    ninf = float(np.max(np.abs(w)))
    if n2 == 0.0:
        return {"r2": float("nan"), "rinf": float("nan")}
    return {"r2": m / n2 / float(gamma2), "rinf": m / ninf / float(gamma_inf)}


def log_steps(total, count=60) -> np.ndarray:
    """About ``count`` log-spaced unique integers in ``[1, total]``, always containing 1 and ``total``."""
    total = int(total)
    if total < 1:
        raise ValueError("total must be >= 1")
    count = max(int(count), 2)
    s = np.unique(np.rint(np.logspace(0.0, math.log10(total), count)).astype(np.int64))
    s = np.unique(np.concatenate([[1], s[(s >= 1) & (s <= total)], [total]]))
    return s.astype(np.int64)


def _signed(X, y) -> np.ndarray:
    """Rows ``a_i = y_i x_i`` (float64)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise ValueError("X must be (n, d) and y must be (n,)")
    return y[:, None] * X


# ----------------------------------------------------------------------------------------------
# training
# ----------------------------------------------------------------------------------------------

def _record_set(steps: int, record_at) -> np.ndarray:
    if record_at is None:
        rec = log_steps(steps)
    else:
        rec = np.asarray(sorted({int(s) for s in record_at}), dtype=np.int64)
        rec = rec[(rec >= 1) & (rec <= steps)]
        rec = np.unique(np.concatenate([rec, [steps]])).astype(np.int64)
    return rec


def train(X, y, algorithm, steps, eta0=0.1, beta1=0.9, beta2=0.999, batch=1, beta=0.99,
          record_at=None, progress: Callable[[int, int], None] | None = None, w0=None, precond="own") -> dict:
    """Run Adam / Signum / AdamProxy / GD on the logistic loss from ``w_0 = 0`` with ``eta_t = eta0/sqrt(t)``.

    Extra keyword arguments (not in the paper's setting): ``progress(t, steps)`` is called about
    100 times; ``w0`` replaces the initial iterate 0 (used by the tests to start at huge margins).

    One *step* ``t = 1..steps`` is one parameter update.  The mini-batch used at step t is the
    consecutive cyclic block ``B_t = {((t-1) b + j) mod N : j = 0..b-1}``: b = 1 is incremental
    (per-sample, cyclic order 0, 1, ..., N-1, 0, ...), b = N is deterministic (full batch).
    The batch gradient is ``g_t = (1/b) sum_{i in B_t} l'(a_i^T w) a_i``.

    * ``"adam"`` (eps = 0, bias correction):
          m_t = b1 m_{t-1} + (1-b1) g_t,   v_t = b2 v_{t-1} + (1-b2) g_t^2,
          w_t = w_{t-1} - eta_t (m_t/(1-b1^t)) / sqrt(v_t/(1-b2^t))       (coordinates with v = 0 do not move)
    * ``"signum"``:  m_t = beta m_{t-1} + (1-beta) g_t,   w_t = w_{t-1} - eta_t sign(m_t)
    * ``"gd"`` (plain (stochastic) gradient descent, the negative control of the sign and of the adaptive
      normalisation; its implicit bias is the l2 max margin, Soudry et al. 2018):  w_t = w_{t-1} - eta_t g_t.
      Not scale invariant, so the true gradient e^L g~ is formed (it only underflows at margins > ~700,
      which GD's logarithmically growing iterates do not reach).
    * ``"adam_proxy"`` (the beta2 -> 1 limit of Inc-Adam's epoch recurrence; always full data,
      ``batch`` is ignored, one step = one proxy update):
          w_t = w_{t-1} - eta_t (sum_i grad L_i(w)) / sqrt(sum_i grad L_i(w)^2)   (coordinate-wise)
      For beta2 -> 1 one Inc-Adam *epoch* (N steps) moves by about sqrt(N) times this update, so
      the time axes of "adam_proxy" and batch-1 "adam" are not comparable step for step; only the
      limit directions are.

    Log-scaled arithmetic (exact for eps = 0): each step computes ``lam_i = log|l'(a_i^T w)|
    = -softplus(a_i^T w)`` and stores the moments relative to a scalar anchor ``c``:
    true ``m = e^c m~``, ``v = e^{2c} v~``.  With ``L = max_{i in B_t} lam_i`` the gradient is
    ``g_t = e^L g~``, ``g~ = -(1/b) sum_i a_i e^{lam_i - L}``.  The new anchor is
    ``c' = max(L, c + log sqrt(max_k v~_k))`` (Signum: ``c + log max_k |m~_k|``), and
    ``m~ <- b1 e^{c-c'} m~ + (1-b1) e^{L-c'} g~``, ``v~ <- b2 e^{2(c-c')} v~ + (1-b2) e^{2(L-c')} g~^2``.
    The update only uses ``m/sqrt(v) = m~/sqrt(v~)`` (resp. ``sign(m~)``), so the common factor
    never has to be formed: gradients of size e^{-1000} are handled exactly.  (The anchor is one
    scalar, so coordinates whose second moment is below ~1e-300 of the largest one would lose
    precision; with the data here all coordinates of every a_i are of comparable size.)

    ``precond`` (Adam and AdamProxy only; the placebos of claims.yaml) takes the second moment from another batch
    regime than the step's, all else kept: ``"own"`` (the algorithm as above), ``"full"`` (v accumulates the
    squared *full-batch* gradient, Det-Adam's preconditioner, whatever the step's batch; AdamProxy's denominator
    becomes |sum_i g_i|, so its update is sign(sum_i g_i)) or ``"per_sample"`` (v accumulates the batch's mean of
    *per-sample* squared gradients (1/b) sum_{i in B_t} g_i^2, Inc-Adam's preconditioner; at b = 1 this is Adam).

    Returns {"steps": int array of recorded step indices (sorted, includes ``steps``),
             "w": (len(steps), d) iterates after those steps}.
    """
    A = _signed(X, y)
    n, d = A.shape
    steps = int(steps)
    if steps < 1:
        raise ValueError("steps must be >= 1")
    algorithm = str(algorithm).lower()
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; expected one of {ALGORITHMS}")
    batch = int(batch)
    if not 1 <= batch <= n:
        raise ValueError(f"batch must be in [1, {n}]")
    rec = _record_set(steps, record_at)
    out = np.empty((rec.size, d))
    pe = max(steps // 100, 1) if progress is not None else 0
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64).reshape(d)
    if precond not in PRECONDS or (precond != "own" and algorithm not in ("adam", "adam_proxy")):
        raise ValueError(f"precond {precond!r}: one of {PRECONDS}, other than 'own' only for adam and adam_proxy")
    if algorithm == "adam_proxy":
        _proxy_loop(A, w, steps, float(eta0), rec, out, progress, pe, precond)
    elif precond != "own":
        _adam_placebo_loop(A, w, steps, float(eta0), float(beta1), float(beta2), batch, rec, out, progress, pe,
                           precond)
    else:
        _batch_loop(A, w, algorithm, steps, float(eta0), float(beta1), float(beta2), float(beta),
                    batch, rec, out, progress, pe)
    return {"steps": rec.copy(), "w": out}


def _batch_loop(A, w, algorithm, steps, eta0, beta1, beta2, beta, b, rec, out, progress, pe):
    """Adam / Signum / GD on consecutive cyclic blocks of size b (b = 1: incremental, b = n: full batch), log-scaled."""
    n, d = A.shape
    period = n // math.gcd(n, b)
    blocks = [np.ascontiguousarray(A[(j * b + np.arange(b)) % n]) for j in range(period)]
    m = np.zeros(d)
    v = np.zeros(d)
    den = np.empty(d)
    r = np.empty(d)
    pos = np.empty(d, dtype=bool)
    exp, log, sqrt, inf = math.exp, math.log, math.sqrt, math.inf
    c = -inf
    b1t = b2t = 1.0
    j, nrec = 0, rec.size
    nr = int(rec[0])
    q = 0
    is_adam = algorithm == "adam"
    ob1, ob2, ob = 1.0 - beta1, 1.0 - beta2, 1.0 - beta
    inv_b = 1.0 / b
    for t in range(1, steps + 1):
        B = blocks[q]
        lam = -np.logaddexp(0.0, B @ w)          # log|l'(a_i^T w)| for i in the block
        L = float(lam.max())
        g = np.exp(lam - L) @ B                  # g~ = -(this)/b ; true gradient = e^L g~
        g *= -inv_b
        if is_adam:
            vmax = float(v.max())
            cv = c + 0.5 * log(vmax) if vmax > 0.0 else -inf
            cn = L if L > cv else cv
            s = exp(c - cn)
            sg = exp(L - cn)
            m *= beta1 * s
            m += (ob1 * sg) * g
            v *= beta2 * s * s
            g *= g
            g *= ob2 * sg * sg
            v += g
            c = cn
            b1t *= beta1
            b2t *= beta2
            np.sqrt(v, out=den)
            np.greater(den, 0.0, out=pos)
            r.fill(0.0)
            np.divide(m, den, out=r, where=pos)
            r *= (eta0 / sqrt(t)) * sqrt(1.0 - b2t) / (1.0 - b1t)
            w -= r
        elif algorithm == "gd":
            g *= (eta0 / sqrt(t)) * exp(L)
            w -= g
        else:
            mmax = float(np.abs(m).max())
            cm = c + log(mmax) if mmax > 0.0 else -inf
            cn = L if L > cm else cm
            s = exp(c - cn)
            m *= beta * s
            g *= ob * exp(L - cn)
            m += g
            c = cn
            np.sign(m, out=r)
            r *= eta0 / sqrt(t)
            w -= r
        q += 1
        if q == period:
            q = 0
        if t == nr:
            out[j] = w
            j += 1
            nr = int(rec[j]) if j < nrec else -1
        if pe and t % pe == 0:
            progress(t, steps)


def _adam_placebo_loop(A, w, steps, eta0, beta1, beta2, b, rec, out, progress, pe, precond):
    """Adam on consecutive cyclic blocks of size b (as ``_batch_loop``) with the second moment of another batch
    regime (``train``'s ``precond``): ``"full"`` feeds v the squared full-batch gradient, ``"per_sample"`` the block's
    mean of squared per-sample gradients. Log-scaled as ``_batch_loop``: the v term has its own scale Lv (the
    full-batch max of lam for "full", the block's for "per_sample") and the anchor is max(L, Lv, c + log sqrt(v~))."""
    n, d = A.shape
    period = n // math.gcd(n, b)
    blocks = [np.ascontiguousarray(A[(j * b + np.arange(b)) % n]) for j in range(period)]
    squares = [B * B for B in blocks]
    m = np.zeros(d)
    v = np.zeros(d)
    den = np.empty(d)
    r = np.empty(d)
    pos = np.empty(d, dtype=bool)
    exp, log, sqrt, inf = math.exp, math.log, math.sqrt, math.inf
    c = -inf
    b1t = b2t = 1.0
    j, nrec = 0, rec.size
    nr = int(rec[0])
    q = 0
    ob1, ob2 = 1.0 - beta1, 1.0 - beta2
    inv_b, inv_n = 1.0 / b, 1.0 / n
    for t in range(1, steps + 1):
        B = blocks[q]
        lam = -np.logaddexp(0.0, B @ w)
        L = float(lam.max())
        g = np.exp(lam - L) @ B
        g *= -inv_b                              # the step's gradient, e^L g~
        if precond == "full":
            lam_all = -np.logaddexp(0.0, A @ w)
            Lv = float(lam_all.max())
            sq = np.exp(lam_all - Lv) @ A
            sq *= inv_n
            sq *= sq                             # (full-batch gradient)^2 = e^{2 Lv} sq
        else:
            Lv = L
            sq = np.exp(2.0 * (lam - L)) @ squares[q]
            sq *= inv_b                          # mean_i g_i^2 over the block = e^{2 L} sq
        vmax = float(v.max())
        cv = c + 0.5 * log(vmax) if vmax > 0.0 else -inf
        cn = max(L, Lv, cv)
        s = exp(c - cn)
        m *= beta1 * s
        m += (ob1 * exp(L - cn)) * g
        v *= beta2 * s * s
        sv = exp(Lv - cn)
        sq *= ob2 * sv * sv
        v += sq
        c = cn
        b1t *= beta1
        b2t *= beta2
        np.sqrt(v, out=den)
        np.greater(den, 0.0, out=pos)
        r.fill(0.0)
        np.divide(m, den, out=r, where=pos)
        r *= (eta0 / sqrt(t)) * sqrt(1.0 - b2t) / (1.0 - b1t)
        w -= r
        q += 1
        if q == period:
            q = 0
        if t == nr:
            out[j] = w
            j += 1
            nr = int(rec[j]) if j < nrec else -1
        if pe and t % pe == 0:
            progress(t, steps)


def _proxy_loop(A, w, steps, eta0, rec, out, progress, pe, precond="own"):
    """AdamProxy  w <- w - eta_t sum_i g_i / sqrt(sum_i g_i^2), g_i = l'(a_i^T w) a_i, log-scaled:
    with lam_i = log|l'_i| and L = max_i lam_i the common factor e^L cancels in the ratio."""
    n, d = A.shape
    A = np.ascontiguousarray(A)
    A2 = A * A
    den = np.empty(d)
    r = np.empty(d)
    pos = np.empty(d, dtype=bool)
    sqrt = math.sqrt
    j, nrec = 0, rec.size
    nr = int(rec[0])
    for t in range(1, steps + 1):
        lam = -np.logaddexp(0.0, A @ w)
        e = np.exp(lam - lam.max())
        num = e @ A                               # = -sum_i g_i / e^L
        if precond == "full":                     # the placebo: |sum_i g_i| / e^L, an update sign(sum_i g_i)
            np.abs(num, out=den)
        else:
            e *= e
            np.sqrt(e @ A2, out=den)              # = sqrt(sum_i g_i^2) / e^L
        np.greater(den, 0.0, out=pos)
        r.fill(0.0)
        np.divide(num, den, out=r, where=pos)
        r *= eta0 / sqrt(t)
        w += r                                    # w - eta * (sum g)/sqrt(sum g^2)
        if t == nr:
            out[j] = w
            j += 1
            nr = int(rec[j]) if j < nrec else -1
        if pe and t % pe == 0:
            progress(t, steps)
