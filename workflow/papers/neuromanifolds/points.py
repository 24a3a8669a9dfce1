"""The setting of every experiment: architectures from params entries, activations, initial parameters, inputs,
and the random point of a Table A row (E1-E6 work at that very point).

Shahverdi, Marchetti, Kohn, "Learning on a Razor's Edge" (ICLR 2026, arXiv 2505.11846); spec
``shared/papers/neuromanifolds.md`` sections 6.2-6.4. Pure functions, no I/O, no printing; randomness only from
the seeds / Generators passed in. The network engine (architectures, forward-mode Jacobians in float / F_p / Q,
ranks, closed forms) is ``nets``.

Setting.  Bias-free polynomial networks ``f_W(x) = W_L sigma(W_{L-1} ... sigma(W_1 x))`` with
``sigma(x) = sum_{i=1}^r c_i x^i`` (generic: ``c_i ~ N(0,1)``; contrast: the monomial ``x^r``); MLPs with
widths ``(d_0, ..., d_L)`` and single-channel 1-D CNNs with filters ``k_l`` / strides ``s_l`` (one output,
input = one receptive field).  The neuromanifold is the image ``M`` of the parametrisation; we use

    phi(W) = (f_W(x_1), ..., f_W(x_N)) in R^{N d_L},

whose Jacobian has the rank of the coefficient map's Jacobian at generic points x_n once N d_L >= that
rank (the tangent space is a space of polynomials of dimension <= #params, which generic evaluation
points separate).  ``dim M`` = generic rank of the Jacobian.

Architecture specs are plain dicts: ``{"kind": "mlp", "widths": [2, 2, 1]}`` or
``{"kind": "cnn", "kernels": [3, 2], "strides": [2, 1]}``.  Parameters are flat float64 vectors
(layer after layer; MLP layers row-major).  Randomness only from the seeds / Generators passed in.

    make_arch(spec) -> Arch (widths, n_params, n_hidden, label())  (nets: mlp_arch(widths), cnn_arch(k, s))
    arch_spec(params entry) -> spec;  point_seed(seed, label, r);  random_point(spec, r, n_points, seed) ->
        (arch, c, theta, X, rng) of a Table A row (E3-E6 work at that very point)
    init_params(arch, rng, scale=1.0, mask=None) -> theta ~ N(0, scale^2/fan_in)
    sample_inputs(n, d0, rng) -> X ~ N(0, I);  is_monomial(c)
    cnn_shift_vectors(arch) -> [t], cnn_shift_mask(arch, t), shift_cnn_params(arch, theta, t),
    cnn_zero_padded_params(arch, rng, shifts=None)  (the CNN parameters of E2's zero-padded rank and of E4, E5)
"""

from __future__ import annotations

import zlib
from itertools import product

import numpy as np

from .nets import Arch, activation_coeffs, as_arch


def make_arch(spec) -> Arch:
    """Normalise a dict spec (or an Arch) into an ``Arch`` (widths, parameter layout)."""
    return as_arch(spec)


def arch_spec(entry) -> dict:
    """params.yaml entry -> architecture dict: a list of widths is an MLP, {kernels, strides} a CNN."""
    if isinstance(entry, dict):
        return {"kind": "cnn", "kernels": list(entry["kernels"]), "strides": list(entry["strides"])}
    return {"kind": "mlp", "widths": list(entry)}


def point_seed(seed: int, label: str, r: int) -> int:
    """One seed per (architecture, degree), independent of the order of the lists: each row is reproducible alone."""
    return int(np.random.SeedSequence([seed, zlib.crc32(label.encode()), r]).generate_state(1)[0])


def is_monomial(c) -> bool:
    """True if sigma has exactly one nonzero coefficient of degree >= 1 (sigma = c_r x^r)."""
    c = np.asarray(c, float)
    return bool(np.count_nonzero(c) == 1 and c[0] == 0)


def _fan_in(arch: Arch) -> np.ndarray:
    """Per-parameter fan-in: d_{l-1} for an MLP layer, k_l for a CNN layer."""
    out = []
    for l, b in enumerate(arch.bases):
        fan = arch.kernels[l] if arch.kind == "cnn" else arch.widths[l]
        out.append(np.full(b.shape[0], float(fan)))
    return np.concatenate(out)


def init_params(arch, rng: np.random.Generator, scale: float = 1.0, mask=None) -> np.ndarray:
    """``theta_p ~ N(0, scale^2 / fan_in)`` (keeps pre-activations O(scale) for x ~ N(0, I), so that
    degree-r^{L-1} polynomials stay well scaled); entries outside a boolean ``mask`` are exactly 0."""
    arch = as_arch(arch)
    th = scale * rng.standard_normal(arch.n_params) / np.sqrt(_fan_in(arch))
    if mask is not None:
        th = np.where(np.asarray(mask, bool), th, 0.0)
    return th


def sample_inputs(n: int, d0: int, rng: np.random.Generator) -> np.ndarray:
    """``N`` generic input points ``x_n ~ N(0, I_{d_0})`` (spec 6.3)."""
    return rng.standard_normal((int(n), int(d0)))

def random_point(spec, r: int, n_points: int, seed: int):
    """(arch, c, theta, X, rng): the generic sigma, parameters and inputs that architecture_dimension draws
    for this seed, in the same order, so that E3/E4 work at the very point of the Table A row."""
    arch = make_arch(spec)
    rng = np.random.default_rng(seed)
    c = activation_coeffs(r, "generic", rng)
    theta = init_params(arch, rng)
    X = sample_inputs(n_points, arch.widths[0], rng)
    return arch, c, theta, X, rng

def _mats(arch: Arch, theta) -> list:
    theta = np.asarray(theta, float)
    return [theta[arch.layer_slice(l)].reshape(arch.widths[l + 1], arch.widths[l])
            for l in range(arch.n_layers)]

def cnn_shift_vectors(arch) -> list:
    """Integer shift vectors t = (t_1..t_L) != 0, |t_l| <= k_l - 1, with the integrality condition

        sum_l t_l s_1 ... s_{l-1} = 0.

    Shifting filter l by t_l (w'_{l,j} = w_{l,j - t_l}) moves the receptive field of the output by
    t_l s_1...s_{l-1} input positions, so a zero-padded W (``cnn_shift_mask``) and its shift W' give the
    same function exactly when the total displacement vanishes: the proper subnetworks of spec claim 3."""
    arch = as_arch(arch)
    if arch.kind != "cnn":
        raise ValueError("CNN only")
    S = np.cumprod((1,) + arch.strides[:-1])
    out = []
    for t in product(*[range(-(k - 1), k) for k in arch.kernels]):
        if any(t) and int(np.dot(t, S)) == 0:
            out.append(tuple(int(v) for v in t))
    return out


def cnn_shift_mask(arch, shifts) -> np.ndarray:
    """Boolean support of W for which ``shift_cnn_params(W, shifts)`` is defined: filter l keeps
    entries j < k_l - t_l if t_l >= 0 (its last t_l entries are zero), entries j >= -t_l if t_l < 0."""
    arch = as_arch(arch)
    m = []
    for k, t in zip(arch.kernels, shifts):
        j = np.arange(k)
        m.append(j < k - t if t >= 0 else j >= -t)
    return np.concatenate(m)


def shift_cnn_params(arch, theta, shifts) -> np.ndarray:
    """W' with w'_{l,j} = w_{l,j - t_l}; raises ValueError if a nonzero entry would leave its filter."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    if np.any(theta[~cnn_shift_mask(arch, shifts)] != 0):
        raise ValueError("theta is not zero-padded for these shifts")
    out = []
    for l, t in enumerate(shifts):
        w = theta[arch.layer_slice(l)]
        out.append(np.roll(w, t))  # the entries that wrap around are zero by the mask
    return np.concatenate(out)


def cnn_zero_padded_params(arch, rng: np.random.Generator, shifts=None) -> np.ndarray:
    """A random zero-padded CNN point: random weights on ``cnn_shift_mask(shifts)`` (default: the first
    of ``cnn_shift_vectors``; if there is none, only the first entry of the first filter is zeroed)."""
    arch = as_arch(arch)
    if shifts is None:
        sv = cnn_shift_vectors(arch)
        shifts = sv[0] if sv else None
    if shifts is None:
        mask = np.ones(arch.n_params, bool)
        mask[0] = False
    else:
        mask = cnn_shift_mask(arch, shifts)
    return init_params(arch, rng, mask=mask)
