"""Polynomial MLPs / single-channel CNNs as layered maps, their Jacobians (float, mod p, exact Q) and ranks.

Everything the experiments (points, dimension, identifiability, singular, training) need: architectures, the parametrisation
``phi(W) = (f_W(x_1), ..., f_W(x_N))``, its Jacobian by forward-mode differentiation in any ring
(float64, the prime field F_p, the rationals Q), numerical and exact ranks, and the closed-form
dimension counts (paper formulas, ambient dimensions, Alexander-Hirschowitz).

Network (no biases; spec 6.2/6.3).  Widths ``d_0, ..., d_L``; activation ``sigma(x) = sum_i c_i x^i``
applied after every layer but the last:

    f_W(x) = W_L sigma(W_{L-1} sigma( ... sigma(W_1 x)))          W_l in R^{d_l x d_{l-1}}.

MLP: every entry of ``W_l`` is a parameter (``#params = sum_l d_l d_{l-1}``).
Single-channel 1-D CNN with filters ``w_l in R^{k_l}`` and strides ``s_l``: ``W_l`` is the strided
Toeplitz matrix ``(W_l)_{j, s_l j + t} = w_{l,t}``.  Convolutions are shift-equivariant, so one output
suffices: ``d_L = 1`` and the input is one receptive field,

    d_{l-1} = s_l (d_l - 1) + k_l,       d_0 = k_1 + sum_{l>=2} (k_l - 1) s_1 ... s_{l-1},

with ``#params = sum_l k_l``.  Both are "layered linear-in-parameters" maps: ``W_l = sum_p theta_p B_{l,p}``
with a 0/1 basis tensor ``B_l`` of shape ``(P_l, d_l, d_{l-1})``, and one forward-mode engine serves both.

The parameter vector ``theta`` concatenates the layers in order; an MLP layer is stored row-major
(``theta[off + i d_{l-1} + j] = (W_l)_{ij}``).  The Jacobian is ``J[n d_L + o, p] = d f_W(x_n)_o / d theta_p``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Sequence

import numpy as np

MERSENNE_61 = (1 << 61) - 1  # prime modulus of the default exact rank (rank mod p <= rank over Q)
RANK_RTOL = 1e-8             # spec 6.3: singular values > 1e-8 * s_max count towards the rank

# Alexander-Hirschowitz exceptions, as (n variables, degree r, k summands): the k-th secant variety of
# the degree-r Veronese of P^{n-1} has dimension one less than expected (besides r = 2, handled apart).
AH_EXCEPTIONS = frozenset({(3, 4, 5), (4, 4, 9), (5, 4, 14), (5, 3, 7)})


# ----------------------------------------------------------------------------------------------
# architectures
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Arch:
    """A normalised architecture.  ``kind`` is "mlp" or "cnn"; ``widths`` = (d_0, ..., d_L)."""

    kind: str
    widths: tuple
    kernels: tuple | None
    strides: tuple | None
    bases: tuple  # per layer, int8 array (P_l, d_l, d_{l-1})
    offsets: tuple  # per layer, first index of the layer in theta

    @property
    def n_layers(self) -> int:
        return len(self.widths) - 1

    @property
    def n_params(self) -> int:
        return int(sum(b.shape[0] for b in self.bases))

    @property
    def n_hidden(self) -> int:
        """Number of hidden neurons ``sum_{l=1}^{L-1} d_l`` (one scaling symmetry each for sigma = x^r)."""
        return int(sum(self.widths[1:-1]))

    def layer_slice(self, l: int) -> slice:
        return slice(self.offsets[l], self.offsets[l] + self.bases[l].shape[0])

    def spec(self) -> dict:
        if self.kind == "mlp":
            return {"kind": "mlp", "widths": list(self.widths)}
        return {"kind": "cnn", "kernels": list(self.kernels), "strides": list(self.strides)}

    def label(self) -> str:
        if self.kind == "mlp":
            return "mlp(" + ",".join(map(str, self.widths)) + ")"
        return ("cnn(k=" + ",".join(map(str, self.kernels)) + ";s="
                + ",".join(map(str, self.strides)) + ")")


def _offsets(bases) -> tuple:
    out, o = [], 0
    for b in bases:
        out.append(o)
        o += b.shape[0]
    return tuple(out)


def mlp_arch(widths: Sequence[int]) -> Arch:
    """Fully connected, bias-free MLP with widths ``(d_0, ..., d_L)``, ``L >= 1``."""
    widths = tuple(int(d) for d in widths)
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError(f"bad MLP widths {widths}")
    bases = []
    for din, dout in zip(widths[:-1], widths[1:]):
        b = np.zeros((dout * din, dout, din), dtype=np.int8)
        for i in range(dout):
            for j in range(din):
                b[i * din + j, i, j] = 1
        bases.append(b)
    return Arch("mlp", widths, None, None, tuple(bases), _offsets(bases))


def cnn_widths(kernels: Sequence[int], strides: Sequence[int]) -> tuple:
    """Layer sizes of a single-output CNN: ``d_L = 1``, ``d_{l-1} = s_l (d_l - 1) + k_l``."""
    d = [1]
    for k, s in zip(reversed(kernels), reversed(strides)):
        d.append(s * (d[-1] - 1) + k)
    return tuple(reversed(d))


def cnn_arch(kernels: Sequence[int], strides: Sequence[int]) -> Arch:
    """Single-channel 1-D CNN, filters of sizes ``k_l`` and strides ``s_l``, one output (see module doc)."""
    kernels = tuple(int(k) for k in kernels)
    strides = tuple(int(s) for s in strides)
    if len(kernels) != len(strides) or not kernels or min(kernels) < 1 or min(strides) < 1:
        raise ValueError(f"bad CNN kernels/strides {kernels} {strides}")
    widths = cnn_widths(kernels, strides)
    bases = []
    for l, (k, s) in enumerate(zip(kernels, strides)):
        din, dout = widths[l], widths[l + 1]
        b = np.zeros((k, dout, din), dtype=np.int8)
        for j in range(dout):
            for t in range(k):
                b[t, j, s * j + t] = 1
        bases.append(b)
    return Arch("cnn", widths, kernels, strides, tuple(bases), _offsets(bases))


def as_arch(spec) -> Arch:
    """Accept an ``Arch`` or a plain dict ``{"kind": "mlp", "widths": [...]}`` /
    ``{"kind": "cnn", "kernels": [...], "strides": [...]}``."""
    if isinstance(spec, Arch):
        return spec
    if not isinstance(spec, Mapping):
        raise TypeError(f"architecture must be an Arch or a dict, got {type(spec)}")
    kind = spec.get("kind", "mlp")
    if kind == "mlp":
        return mlp_arch(spec["widths"])
    if kind == "cnn":
        return cnn_arch(spec["kernels"], spec["strides"])
    raise ValueError(f"unknown architecture kind {kind!r}")


def layer_matrices(arch: Arch, theta) -> list:
    """``W_l = sum_p theta_p B_{l,p}`` for every layer (works for float and object arrays)."""
    theta = np.asarray(theta)
    return [np.tensordot(theta[arch.layer_slice(l)], arch.bases[l].astype(theta.dtype), axes=1)
            for l in range(arch.n_layers)]


# ----------------------------------------------------------------------------------------------
# activations
# ----------------------------------------------------------------------------------------------

def activation_coeffs(r: int, kind: str = "generic", rng: np.random.Generator | None = None,
                      constant: bool = False) -> np.ndarray:
    """Coefficients ``c`` (length r+1) of ``sigma(x) = sum_{i=0}^r c_i x^i``.

    ``generic``: ``c_i ~ N(0, 1)`` for ``i = 1..r`` and ``c_0 = 0`` (``sigma(0) = 0``, needed by the CNN
    theorem and by the dead-neuron subnetworks) unless ``constant=True``.  ``monomial``: ``sigma = x^r``.
    """
    r = int(r)
    if r < 1:
        raise ValueError("degree r must be >= 1")
    c = np.zeros(r + 1)
    if kind == "monomial":
        c[r] = 1.0
        return c
    if kind != "generic":
        raise ValueError(f"unknown activation kind {kind!r}")
    rng = np.random.default_rng(0) if rng is None else rng
    c[1:] = rng.standard_normal(r)
    if constant:
        c[0] = rng.standard_normal()
    return c


def _horner(c, h, reduce):
    """``sigma(h)`` and ``sigma'(h)`` elementwise by Horner's rule (``reduce`` maps into the ring)."""
    r = len(c) - 1
    s = np.full(h.shape, c[r], dtype=h.dtype) if h.dtype != object else _obj_full(h.shape, c[r])
    ds = np.full(h.shape, r * c[r], dtype=h.dtype) if h.dtype != object else _obj_full(h.shape, r * c[r])
    if r == 0:
        ds = ds * 0
    for i in range(r - 1, -1, -1):
        s = reduce(s * h + c[i])
        if i >= 1:
            ds = reduce(ds * h + i * c[i])
    return s, ds


def _obj_full(shape, value):
    out = np.empty(shape, dtype=object)
    out.fill(value)
    return out


# ----------------------------------------------------------------------------------------------
# forward pass and Jacobian (forward mode, any ring)
# ----------------------------------------------------------------------------------------------

def _forward(arch: Arch, theta, X, c, want_jac: bool, reduce=lambda a: a):
    """Forward-mode pass.  Returns ``f`` (N, d_L) and, if asked, ``df`` (N, d_L, P).

    Layer l:  h = z W_l^T,   dh = dz . W_l^T + [z B_{l,p}^T]_p (own parameters),
              z' = sigma(h), dz' = sigma'(h) * dh  (no activation after the last layer).
    """
    z = X
    P = arch.n_params
    dz = None
    Ws = layer_matrices(arch, theta)
    for l, (W, B) in enumerate(zip(Ws, arch.bases)):
        h = reduce(z @ W.T)
        if want_jac:
            own = np.einsum("nk,pik->nip", z, B.astype(z.dtype) if z.dtype != object else B.astype(object))
            if dz is None:
                dh = np.zeros(h.shape + (P,), dtype=h.dtype) if h.dtype != object else _obj_full(h.shape + (P,), 0)
            else:
                dh = np.einsum("nkp,ik->nip", dz, W)
            sl = arch.layer_slice(l)
            dh[:, :, sl] = dh[:, :, sl] + own
            dh = reduce(dh)
        if l < arch.n_layers - 1:
            s, ds = _horner(c, h, reduce)
            if want_jac:
                dz = reduce(ds[:, :, None] * dh)
            z = s
        else:
            z = h
            if want_jac:
                dz = dh
    return z, dz


def forward(arch, theta, X, c) -> np.ndarray:
    """Network outputs ``f_W(x_n)``, shape (N, d_L), float64."""
    arch = as_arch(arch)
    f, _ = _forward(arch, np.asarray(theta, float), np.asarray(X, float), np.asarray(c, float), False)
    return f


def jacobian(arch, theta, X, c) -> np.ndarray:
    """Jacobian of ``phi(W) = (f_W(x_1), ..., f_W(x_N))``, shape (N d_L, P), float64."""
    arch = as_arch(arch)
    f, df = _forward(arch, np.asarray(theta, float), np.asarray(X, float), np.asarray(c, float), True)
    return df.reshape(-1, arch.n_params)


def forward_and_jacobian(arch, theta, X, c):
    """Both at once: ``(f (N, d_L), J (N d_L, P))``."""
    arch = as_arch(arch)
    f, df = _forward(arch, np.asarray(theta, float), np.asarray(X, float), np.asarray(c, float), True)
    return f, df.reshape(-1, arch.n_params)


# ----------------------------------------------------------------------------------------------
# exact arithmetic: F_p and Q
# ----------------------------------------------------------------------------------------------

def _to_fraction(v) -> Fraction:
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, Fraction):
        return v
    return Fraction(*float(v).as_integer_ratio())  # a float64 is an exact dyadic rational


def to_mod_p(a, p: int = MERSENNE_61) -> np.ndarray:
    """Exact image in F_p of an array of floats (dyadic rationals) or ints, as an object array."""
    a = np.asarray(a)
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(a.reshape(-1)):
        fr = _to_fraction(v)
        if fr.denominator % p == 0:
            raise ZeroDivisionError("denominator divisible by p")
        flat[i] = fr.numerator % p * pow(fr.denominator, -1, p) % p
    return out


def to_fractions(a) -> np.ndarray:
    a = np.asarray(a)
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(a.reshape(-1)):
        flat[i] = _to_fraction(v)
    return out


def jacobian_mod_p(arch, theta, X, c, p: int = MERSENNE_61) -> np.ndarray:
    """The exact Jacobian at the rational point (theta, X, c) reduced mod p (object array of ints)."""
    arch = as_arch(arch)
    th, Xp, cp = to_mod_p(theta, p), to_mod_p(X, p), [int(v) for v in to_mod_p(c, p)]
    _, df = _forward(arch, th, Xp, cp, True, reduce=lambda a: a % p)
    return df.reshape(-1, arch.n_params)


def jacobian_rational(arch, theta, X, c) -> np.ndarray:
    """The exact Jacobian over Q (object array of ``Fraction``); for tiny cases only."""
    arch = as_arch(arch)
    _, df = _forward(arch, to_fractions(theta), to_fractions(X), list(to_fractions(c)), True)
    return df.reshape(-1, arch.n_params)


def rank_mod_p(M, p: int = MERSENNE_61) -> int:
    """Rank over F_p by Gaussian elimination (entries: ints).  For an integer (or p-integral rational)
    matrix, ``rank_p(M) <= rank_Q(M)``: a certified lower bound of the rational rank."""
    A = [[int(v) % p for v in row] for row in np.asarray(M, dtype=object)]
    return _rank_field(A, lambda x: pow(x, -1, p), lambda x: x % p)


def rank_rational(M) -> int:
    """Exact rank over Q (entries: ints / Fractions / floats taken as exact dyadic rationals)."""
    A = [[_to_fraction(v) for v in row] for row in np.asarray(M, dtype=object)]
    return _rank_field(A, lambda x: 1 / x, lambda x: x)


def _rank_field(A, inv, red) -> int:
    if not A:
        return 0
    n_rows, n_cols = len(A), len(A[0])
    rank, row = 0, 0
    for col in range(n_cols):
        piv = next((i for i in range(row, n_rows) if A[i][col] != 0), None)
        if piv is None:
            continue
        A[row], A[piv] = A[piv], A[row]
        ip = inv(A[row][col])
        prow = [red(v * ip) for v in A[row]]
        A[row] = prow
        for i in range(row + 1, n_rows):
            f = A[i][col]
            if f != 0:
                Ai = A[i]
                A[i] = [red(Ai[j] - f * prow[j]) if j >= col else Ai[j] for j in range(n_cols)]
        row += 1
        rank += 1
        if row == n_rows:
            break
    return rank


# ----------------------------------------------------------------------------------------------
# numerical rank
# ----------------------------------------------------------------------------------------------

def numerical_rank(J, rtol: float = RANK_RTOL, equilibrate: bool = True) -> dict:
    """Rank of ``J`` = #{singular values > rtol * s_max} (spec 6.3, rtol = 1e-8).

    ``equilibrate``: scale every nonzero column, then every nonzero row, to unit 2-norm first.  This
    does not change the exact rank (J -> D_r J D_c with invertible diagonal D's) but removes the scale
    disparity between monomials of low and high degree, which otherwise hides true singular values
    below the tolerance.  Exactly-zero columns/rows (dead neurons) stay zero.
    Returns ``rank``, ``singular_values`` (of the matrix actually used, descending, normalised by s_max)
    and ``gap`` = s_rank / s_{rank+1} (inf if full column rank): a large gap means a clear-cut rank.
    """
    A = np.array(J, dtype=float, copy=True)
    if equilibrate:
        cn = np.linalg.norm(A, axis=0)
        A[:, cn > 0] /= cn[cn > 0]
        rn = np.linalg.norm(A, axis=1)
        A[rn > 0] /= rn[rn > 0, None]
    s = np.linalg.svd(A, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return {"rank": 0, "singular_values": s, "gap": math.inf}
    s = s / s[0]
    rank = int(np.sum(s > rtol))
    gap = math.inf if rank >= s.size else float(s[rank - 1] / max(s[rank], 1e-300))
    return {"rank": rank, "singular_values": s, "gap": gap}


# ----------------------------------------------------------------------------------------------
# closed forms
# ----------------------------------------------------------------------------------------------

def degree_support(c, n_layers: int) -> list:
    """Degrees of the monomials that can occur in ``f_W``: ``D_0 = {1}``,
    ``D_{l} = { e_1 + ... + e_i : i in supp(c), e_j in D_{l-1} }`` (degree 0 = constant if c_0 != 0),
    after the L-1 activations.  Sorted list."""
    supp = [i for i, v in enumerate(np.asarray(c, float)) if v != 0]
    D = {1}
    for _ in range(n_layers - 1):
        new = set()
        for i in supp:
            if i == 0:
                new.add(0)
                continue
            sums = {0}
            for _ in range(i):
                sums = {a + b for a in sums for b in D}
            new |= sums
        D = new
    return sorted(D)


def ambient_dim(arch, c) -> int:
    """Dimension of the space of polynomial maps the network can reach coefficient-wise:
    ``d_L * sum_{e in D} C(d_0 + e - 1, e)`` (D = degree support).  For generic sigma of degree r,
    D = {1, ..., r^{L-1}} and this is ``d_L (C(d_0 + r^{L-1}, d_0) - 1)``."""
    arch = as_arch(arch)
    d0, dL = arch.widths[0], arch.widths[-1]
    return int(dL * sum(math.comb(d0 + e - 1, e) for e in degree_support(c, arch.n_layers)))


def formula_dim(arch, activation: str = "generic") -> int:
    """The paper's dimension formula.
    MLP, generic sigma of large degree (Thm: finite generic fibers):  dim M = sum_l d_l d_{l-1}.
    MLP, sigma = x^r: the per-neuron scaling (w_in -> t w_in, w_out -> t^{-r} w_out) gives the upper
    bound  sum_l d_l d_{l-1} - sum_{l<L} d_l  (equality for large r is Kileel et al.'s count).
    CNN (generic sigma with sigma(0) = 0; Thm: generically injective, regular):  dim M = sum_l k_l.
    CNN, sigma = x^r: the scaling of consecutive filters (w_l -> t w_l, w_{l+1} -> t^{-r} w_{l+1}, L - 1 of
    them) gives the upper bound  sum_l k_l - (L - 1)  (the contrast that controls the CNN claims)."""
    arch = as_arch(arch)
    if arch.kind == "cnn":
        return int(sum(arch.kernels)) - (arch.n_layers - 1 if activation == "monomial" else 0)
    if activation == "monomial":
        return arch.n_params - arch.n_hidden
    return arch.n_params


def secant_veronese_dim(n: int, r: int, k: int) -> int:
    """Dimension of {sum_{j=1}^k a_j (w_j . x)^r : a_j in R, w_j in R^n} = the neuromanifold of the
    MLP (n, k, 1) with sigma = x^r = affine cone over the k-th secant of the Veronese nu_r(P^{n-1}).

    r = 1: n (linear forms).  r = 2: symmetric n x n matrices of rank <= k:  n k - k(k-1)/2 (k < n),
    n(n+1)/2 (k >= n).  r >= 3 (Alexander-Hirschowitz):  min(n k, C(n+r-1, r)), minus 1 for the four
    exceptions (n, r, k) in {(3,4,5), (4,4,9), (5,4,14), (5,3,7)}."""
    n, r, k = int(n), int(r), int(k)
    if r == 1:
        return n if k >= 1 else 0
    if r == 2:
        return n * (n + 1) // 2 if k >= n else n * k - k * (k - 1) // 2
    expected = min(n * k, math.comb(n + r - 1, r))
    return expected - 1 if (n, r, k) in AH_EXCEPTIONS else expected


def quadratic_generic_dim(n: int, k: int) -> int:
    """Dimension of the (n, k, 1) MLP with generic quadratic sigma = c_1 x + c_2 x^2 (hand-derived):
    f = c_1 l(x) + c_2 x^T S x with S = W^T diag(a) W (symmetric, rank <= k) and l = W^T a.  Rescaling
    neuron j (w_j -> t_j w_j, a_j -> a_j / t_j^2) keeps S and moves l = sum_j (a_j / t_j) w_j freely
    in the row space of W = range(S); so M = {(S, l) : rank S <= k, l in range S} and
    dim = (n k - k(k-1)/2) + k for k < n, and n(n+1)/2 + n (everything) for k >= n.
    This is < #params = n k + k for 2 <= k: degree 2 is too low for the identifiability theorem."""
    n, k = int(n), int(k)
    if k >= n:
        return n * (n + 1) // 2 + n
    return n * k - k * (k - 1) // 2 + k
