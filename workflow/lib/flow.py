"""Conditional flow matching with straight paths (rectified flow; Lipman et al. 2023, Liu et al. 2023), the training
objective of flow text-to-audio models such as TangoFlux, for any velocity network (aurelius's log-mel generator).

A path runs from noise x0 ~ N(0, I) at t = 0 to a data point x1 at t = 1 along x_t = (1 - t) x0 + t x1, whose
velocity is x1 - x0; the network learns it by regression (mean squared error at t ~ U(0, 1)). Sampling integrates
dx/dt = v(x, t) from noise with Euler steps, optionally with classifier-free guidance (the conditional velocity pushed
away from the unconditional one by a factor w; w = 1 is the plain conditional model).

A network may predict the data point instead of the velocity (`from_data`: v = (x1_hat - x_t) / (1 - t), the same
loss; Li and He 2025, "Back to basics: let denoising generative models denoise"): a network whose tokens are narrower
than its patches cannot carry the patches' noise through to a velocity, but it can carry the clean data, which lies
on a low-dimensional manifold; with EDM's preconditioning (`preconditioned`) it also passes x_t's detail through
where little noise is left.
"""
from __future__ import annotations

from typing import Callable

import torch
from torch.nn import functional as F

Velocity = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (x_t, t of shape (B,)) -> velocity like x_t


MIN_REMAINING = 0.05  # 1 - t is floored here when a data prediction becomes a velocity (t = 1 would divide by 0)


def from_data(predict_data: Velocity) -> Velocity:
    """The velocity field of a network that predicts the data point x1 from (x_t, t)."""
    def velocity(x, t):
        remaining = (1 - t).clamp(min=MIN_REMAINING).view(-1, *([1] * (x.dim() - 1)))
        return (predict_data(x, t) - x) / remaining
    return velocity


def preconditioned(network_out: torch.Tensor, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """A data prediction with EDM's preconditioning (Karras et al. 2022, unit data variance) in the straight path's
    time: D = c_skip(t) x_t + c_out(t) F. Near t = 1 it passes x_t through (the detail the network need not carry),
    near t = 0 it is the network's output (the clean data it must imagine); the target of F has unit variance
    throughout."""
    t = t.view(-1, *([1] * (x.dim() - 1)))
    norm = t ** 2 + (1 - t) ** 2  # the variance of x_t
    return t / norm * x + (1 - t) / norm.sqrt() * network_out


def flow_matching_loss(velocity: Velocity, x1: torch.Tensor, generator: torch.Generator | None = None):
    """The rectified-flow regression loss on a batch of data points x1 (B, ...)."""
    x0 = torch.randn(x1.shape, generator=generator)
    t = torch.rand(len(x1), generator=generator)
    tt = t.view(-1, *([1] * (x1.dim() - 1)))
    return F.mse_loss(velocity((1 - tt) * x0 + tt * x1, t), x1 - x0)


@torch.no_grad()
def euler_sample(velocity: Velocity, noise: torch.Tensor, steps: int) -> torch.Tensor:
    """x at t = 1 from x = noise at t = 0 by `steps` Euler steps of the velocity field."""
    if steps < 1:
        raise ValueError(f"euler_sample needs at least one step, got {steps}")
    x, dt = noise, 1.0 / steps
    for i in range(steps):
        x = x + dt * velocity(x, torch.full((len(x),), i * dt))
    return x


def guided(conditional: Velocity, unconditional: Velocity, weight: float) -> Velocity:
    """Classifier-free guidance: v_u + w (v_c - v_u) (w = 1: the conditional velocity alone)."""
    if weight == 1.0:
        return conditional
    return lambda x, t: (u := unconditional(x, t)) + weight * (conditional(x, t) - u)
