"""Spiking-network pieces shared by the SNN papers (mppd_tv, tp_spikformer): LIF neurons trained with a surrogate
gradient and BPTT over T time steps, the direct (repeated analog) encoder, and synaptic operations counted from
the spikes a layer actually receives.

The neuron is snntorch's `Leaky` (the field's library; it installs alone on the pinned CPU torch, where
spikingjelly pulls a CUDA torch build), set to the papers' hard reset in the same step (`reset_mechanism="zero"`,
`reset_delay=False`) and a sigmoid surrogate (our own: snntorch's overflows, see SigmoidSurrogate). The two
papers' LIF conventions, stable-snn's `u = tau u + I` and spikingjelly's `v += (x - v) / tau`, are one update
`u_t = decay u_{t-1} + gain I_t` with different constants; `LIF` scales the input by `gain` before snntorch's
`u = beta u + I`.

Shapes: time first, (T, B, ...). A LIF layer keeps no state between calls: every forward starts from u = 0.
"""
from __future__ import annotations

import snntorch
import torch
from torch import nn


class SigmoidSurrogate(torch.autograd.Function):
    """Heaviside step forward (a spike where x > 0); the derivative of sigmoid(k x) backward, computed as
    k sigma (1 - sigma). snntorch's own sigmoid surrogate writes it as k e^{-kx} / (e^{-kx} + 1)^2, which is inf / inf
    = NaN once k x < -88 (float32): a membrane far below threshold then poisons every gradient (a spiking
    transformer went silent after a dozen steps)."""

    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return (x > 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        sig = torch.sigmoid(ctx.slope * x)
        return grad * ctx.slope * sig * (1 - sig), None


def sigmoid_surrogate(slope: float):
    return lambda x: SigmoidSurrogate.apply(x, slope)


class LIF(nn.Module):
    """Leaky integrate-and-fire over time: u_t = decay * u_{t-1} + gain * I_t; s_t = H(u_t - v_th) (strict);
    hard reset u_t <- u_t (1 - s_t), its gradient kept; sigmoid surrogate dS/du = k sigma(k x)(1 - sigma(k x)).

    `record = True` keeps the last forward's input currents I (T, B, ...) in `self.currents`: the membrane
    potential perturbation of mppd_tv is built from them."""

    def __init__(self, decay: float, gain: float = 1.0, v_th: float = 1.0, slope: float = 4.0):
        super().__init__()
        self.decay, self.gain, self.v_th, self.slope = decay, gain, v_th, slope
        self.neuron = snntorch.Leaky(beta=decay, threshold=v_th, spike_grad=sigmoid_surrogate(slope),
                                     reset_mechanism="zero", reset_delay=False)
        self.record, self.currents = False, None

    @classmethod
    def stable_snn(cls, tau: float = 0.99, **kw) -> "LIF":
        """Ding et al.'s convention (u = tau u + I): decay tau, input unscaled."""
        return cls(decay=tau, gain=1.0, **kw)

    @classmethod
    def spikingjelly(cls, tau: float = 2.0, **kw) -> "LIF":
        """spikingjelly's LIFNode with decay_input (v += (x - v) / tau, v_reset 0): decay 1 - 1/tau, gain 1/tau."""
        return cls(decay=1.0 - 1.0 / tau, gain=1.0 / tau, **kw)

    def forward(self, current: torch.Tensor) -> torch.Tensor:
        if self.record:
            self.currents = current
        mem = torch.zeros_like(current[0])
        out = []
        for i_t in current:
            s, mem = self.neuron(self.gain * i_t if self.gain != 1.0 else i_t, mem)
            out.append(s)
        return torch.stack(out)

    def extra_repr(self) -> str:
        return f"decay={self.decay:g}, gain={self.gain:g}, v_th={self.v_th:g}, slope={self.slope:g}"


def repeat(x: torch.Tensor, steps: int) -> torch.Tensor:
    """Direct encoding: the analog input presented unchanged at each of `steps` time steps, (T, B, ...)."""
    return x.unsqueeze(0).expand(steps, *x.shape)


class TimeDistributed(nn.Module):
    """Applies a stateless layer (Linear, Conv2d, BatchNorm) to every time step at once: (T, B, ...) in and out."""

    def __init__(self, layer: nn.Module):
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t, b = x.shape[:2]
        y = self.layer(x.reshape(t * b, *x.shape[2:]))
        return y.reshape(t, b, *y.shape[1:])


def synaptic_ops(layer: nn.Module, spikes: torch.Tensor) -> float:
    """Synaptic operations (accumulates) that `layer` performs on a binary input: every input spike is added into
    each output it connects to. Linear: spikes x out_features. Conv2d: for every output position, the spikes in
    its receptive field, times the output channels per group (borders and stride exact: a conv of the spike map
    with a ones kernel counts them)."""
    if isinstance(layer, nn.Linear):
        return float(spikes.sum()) * layer.out_features
    if isinstance(layer, nn.Conv2d):
        x = spikes.reshape(-1, *spikes.shape[-3:])
        per_group = layer.in_channels // layer.groups
        ones = torch.ones(layer.groups, per_group, *layer.kernel_size, dtype=x.dtype)
        reached = nn.functional.conv2d(x, ones, stride=layer.stride, padding=layer.padding,
                                       dilation=layer.dilation, groups=layer.groups)
        return float(reached.sum()) * (layer.out_channels // layer.groups)
    raise TypeError(f"synaptic_ops counts Linear and Conv2d layers, not {type(layer).__name__}")


class SOPCounter:
    """Counts the synaptic operations of every Linear/Conv2d layer of a model whose input is binary (spikes),
    from the spikes it actually receives, while the counter is active (`with SOPCounter(model) as sops:`).
    A layer fed analog values (the encoding layer) is counted apart as multiply-accumulates (`macs`)."""

    def __init__(self, model: nn.Module):
        self.model, self.sops, self.macs, self._hooks = model, 0.0, 0.0, []

    def _hook(self, layer, inputs, _output):
        x = inputs[0].detach()
        if bool(((x == 0) | (x == 1)).all()):
            self.sops += synaptic_ops(layer, x)
        else:  # analog input: every weight is a multiply-accumulate
            ones = torch.ones_like(x)
            self.macs += synaptic_ops(layer, ones)

    def __enter__(self) -> "SOPCounter":
        for m in self.model.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                self._hooks.append(m.register_forward_hook(self._hook))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
