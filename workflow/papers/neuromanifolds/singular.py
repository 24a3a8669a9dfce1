"""E4: singular points from sparse subnetworks (C4): the rank of the Jacobian at a network with a dead neuron (MLP)
or a shifted / zero-padded filter (CNN), and at its symmetric control.

Shahverdi, Marchetti, Kohn, "Learning on a Razor's Edge" (ICLR 2026, arXiv 2505.11846); spec
``shared/papers/neuromanifolds.md`` sections 6.2-6.4. Pure functions, no I/O, no printing; randomness only from
the seeds / Generators passed in. The network engine (architectures, forward-mode Jacobians in float / F_p / Q,
ranks, closed forms) is ``nets``.

    kill_neuron, remove_neuron, embed_dead_neuron
    mlp_subnetwork_report(arch, c, X, theta, layer=1, neuron=0) -> dict: arch, layer, neuron, n_params,
        rank_numeric, rank_exact_lb, rank_sub, n_params_sub, singular_values
    cnn_node_report(arch, c, X, theta, shifts) -> dict: arch, shifts, sum_k, max_abs_diff, rank_W,
        rank_W_shift, rank_joint, rank_joint_exact_lb
    cnn_rescale(arch, theta, r, t), cnn_symmetric_pair_report(arch, r, X, theta) -> the same keys for W and
        its x^r-symmetric image (C4's control: two preimages, one tangent space)
"""

from __future__ import annotations


import numpy as np

from .nets import (Arch, activation_coeffs, as_arch, forward, jacobian, jacobian_mod_p, mlp_arch, numerical_rank,
                   rank_mod_p)
from .dimension import exact_rank_lower_bound
from .points import shift_cnn_params


def _neuron_index(arch: Arch, layer: int, neuron: int):
    """Parameter indices of hidden neuron ``neuron`` of hidden layer ``layer`` (1..L-1):
    its incoming row of W_layer and its outgoing column of W_{layer+1}."""
    if arch.kind != "mlp" or not 1 <= layer < arch.n_layers:
        raise ValueError("need an MLP hidden layer 1..L-1")
    din, d, dout = arch.widths[layer - 1], arch.widths[layer], arch.widths[layer + 1]
    if not 0 <= neuron < d:
        raise ValueError("neuron out of range")
    o_in, o_out = arch.offsets[layer - 1], arch.offsets[layer]
    inc = o_in + neuron * din + np.arange(din)
    out = o_out + np.arange(dout) * d + neuron
    return inc, out


def kill_neuron(arch, theta, layer: int = 1, neuron: int = 0) -> np.ndarray:
    """The subnetwork point: zero the incoming and outgoing weights of one hidden neuron."""
    arch = as_arch(arch)
    th = np.array(theta, float, copy=True)
    inc, out = _neuron_index(arch, layer, neuron)
    th[inc] = 0.0
    th[out] = 0.0
    return th


def remove_neuron(arch, theta, layer: int = 1, neuron: int = 0) -> tuple:
    """(sub_arch, theta_sub): the MLP with that neuron deleted (widths d_layer - 1)."""
    arch = as_arch(arch)
    inc, out = _neuron_index(arch, layer, neuron)
    keep = np.ones(arch.n_params, bool)
    keep[inc] = False
    keep[out] = False
    w = list(arch.widths)
    w[layer] -= 1
    return mlp_arch(w), np.asarray(theta, float)[keep]


def embed_dead_neuron(sub_arch, theta_sub, layer: int = 1, neuron: int = 0) -> tuple:
    """Inverse of ``remove_neuron``: insert a dead neuron (w_in = 0, w_out = 0) -> (full_arch, theta)."""
    sub = as_arch(sub_arch)
    w = list(sub.widths)
    w[layer] += 1
    full = mlp_arch(w)
    inc, out = _neuron_index(full, layer, neuron)
    keep = np.ones(full.n_params, bool)
    keep[inc] = False
    keep[out] = False
    th = np.zeros(full.n_params)
    th[keep] = np.asarray(theta_sub, float)
    return full, th


def mlp_subnetwork_report(arch, c, X, theta, layer: int = 1, neuron: int = 0, exact: bool = True) -> dict:
    """E4 (MLP, "cusp type"): rank of J at the dead-neuron point ``kill_neuron(theta)``.

    With sigma(0) = 0 the dead neuron's columns of J vanish identically (d/dw_in carries the factor
    w_out = 0, d/dw_out the factor sigma(0) = 0), so rank J = rank of the subnetwork's Jacobian <
    #params = dim M: the parametrisation drops rank there.  Returns rank_numeric, rank_exact_lb,
    n_params, rank_sub (numerical rank of the (d_layer - 1)-subnetwork at the same weights),
    n_params_sub, singular_values.  (A rank drop of phi is evidence, not a proof, that the image point is
    singular.)"""
    arch = as_arch(arch)
    th0 = kill_neuron(arch, theta, layer, neuron)
    J = jacobian(arch, th0, X, c)
    nr = numerical_rank(J)
    sub, ths = remove_neuron(arch, th0, layer, neuron)
    out = {
        "arch": arch.label(),
        "layer": int(layer),
        "neuron": int(neuron),
        "n_params": arch.n_params,
        "rank_numeric": nr["rank"],
        "singular_values": nr["singular_values"],
        "n_params_sub": sub.n_params,
        "rank_sub": numerical_rank(jacobian(sub, ths, X, c))["rank"],
    }
    if exact:
        out["rank_exact_lb"] = exact_rank_lower_bound(arch, th0, X, c, min(len(X), 2 * arch.n_params + 10))
    return out

def _pair_report(arch, c, X, theta, theta2, exact: bool = True) -> dict:
    """Two parameter points of one CNN: max |phi(W) - phi(W')|, the ranks of J_W, J_W' and [J_W, J_W']
    (float and, if ``exact``, the exact rank mod p of the joint Jacobian), and sum k."""
    J1, J2 = jacobian(arch, theta, X, c), jacobian(arch, theta2, X, c)
    out = {
        "arch": arch.label(),
        "sum_k": int(sum(arch.kernels)),
        "max_abs_diff": float(np.max(np.abs(forward(arch, theta, X, c) - forward(arch, theta2, X, c)))),
        "rank_W": numerical_rank(J1)["rank"],
        "rank_W_shift": numerical_rank(J2)["rank"],
        "rank_joint": numerical_rank(np.hstack([J1, J2]))["rank"],
    }
    if exact:
        n = min(len(X), 4 * arch.n_params + 10)
        Jp = np.hstack([jacobian_mod_p(arch, theta, X[:n], c), jacobian_mod_p(arch, theta2, X[:n], c)])
        out["rank_joint_exact_lb"] = rank_mod_p(Jp)
    return out


def cnn_node_report(arch, c, X, theta, shifts, exact: bool = True) -> dict:
    """E4 (CNN, "node type"): W zero-padded for ``shifts``, W' = shift(W).  phi(W) = phi(W') while the
    two tangent spaces differ: rank [J_W, J_W'] > sum k (two branches of M through one point) although
    each of J_W, J_W' has full rank sum k (regular parametrisation).  Returns max_abs_diff, rank_W,
    rank_W_shift, rank_joint, rank_joint_exact_lb, sum_k, shifts."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    return _pair_report(arch, c, X, theta, shift_cnn_params(arch, theta, shifts), exact) | {"shifts": list(shifts)}


def cnn_rescale(arch, theta, r: int, t: float = 2.0, layer: int = 0) -> np.ndarray:
    """The x^r scaling symmetry of a CNN: filter ``layer`` times t, filter ``layer + 1`` times t^{-r} (the next
    layer's input is scaled by t^r, so f is unchanged).  t = 2 keeps dyadic parameters dyadic (exact ranks)."""
    arch = as_arch(arch)
    out = np.asarray(theta, float).copy()
    out[arch.layer_slice(layer)] *= t
    out[arch.layer_slice(layer + 1)] *= float(t) ** (-int(r))
    return out


def cnn_symmetric_pair_report(arch, r: int, X, theta, t: float = 2.0, exact: bool = True) -> dict:
    """Control of the node (C4): with sigma = x^r, W and its image W' under the scaling symmetry
    (``cnn_rescale``): the same function and, since phi(S W) = phi(W) for all W gives J_{SW} S = J_W, the same
    tangent space, so rank [J_W, J_W'] = rank J_W <= sum k - (L - 1): two preimages, no node.  Same keys as
    ``cnn_node_report`` (``shifts`` empty)."""
    arch = as_arch(arch)
    theta = np.asarray(theta, float)
    c = activation_coeffs(r, "monomial")
    return _pair_report(arch, c, X, theta, cnn_rescale(arch, theta, r, t), exact) | {"shifts": []}
