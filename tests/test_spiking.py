"""The shared spiking pieces (workflow/lib/spiking.py) and image readers (workflow/lib/images.py): known answers."""
from __future__ import annotations

import gzip
import io
import math
import tarfile

import numpy as np
import pytest
import torch
from torch import nn

from workflow.core import fetch as F
from workflow.lib import images, spiking


def closed_form_lif(current: float, decay: float, gain: float, v_th: float, steps: int):
    """Constant input: between spikes u_n = gain I (1 - decay^n) / (1 - decay), n steps after the last reset; a
    spike where u_n > v_th, after which u restarts from 0. Returns (membrane before reset, spike times)."""
    trace, spikes, n = [], [], 0
    for t in range(steps):
        n += 1
        u = gain * current * (1 - decay ** n) / (1 - decay)
        trace.append(u)
        if u > v_th:
            spikes.append(t)
            n = 0
    return trace, spikes


@pytest.mark.parametrize("decay, gain, current", [(0.99, 1.0, 0.3), (0.5, 1.0, 0.6), (0.5, 0.5, 1.5), (0.9, 1.0, 2.5)])
def test_lif_spike_times_follow_the_closed_form(decay, gain, current):
    lif = spiking.LIF(decay=decay, gain=gain)
    seen = []
    lif.neuron.register_forward_hook(lambda m, inp, out: seen.append(float(inp[1]) * decay + float(inp[0])))
    s = lif(torch.full((12, 1), current))
    trace, spikes = closed_form_lif(current, decay, gain, 1.0, 12)
    assert np.flatnonzero(s.flatten().numpy()).tolist() == spikes and spikes  # every case spikes at least once
    np.testing.assert_allclose(seen, trace, rtol=1e-5)


def test_the_two_conventions():
    sj = spiking.LIF.spikingjelly(tau=2.0)  # v += (x - v) / 2: with x = 1.5, v = 0.75, 1.125 -> spike at t = 1
    assert (sj.decay, sj.gain) == (0.5, 0.5)
    assert sj(torch.full((3, 1), 1.5)).flatten().tolist() == [0.0, 1.0, 0.0]
    ss = spiking.LIF.stable_snn(tau=0.99)
    assert (ss.decay, ss.gain) == (0.99, 1.0)


def test_the_surrogate_gradient_is_the_sigmoids_derivative():
    k, gain = 4.0, 0.5
    lif = spiking.LIF(decay=0.5, gain=gain, slope=k)
    x = torch.tensor([[0.4, 1.0, 2.0, 3.5]], requires_grad=True)  # one time step, 4 neurons
    lif(x).sum().backward()
    z = gain * x.detach() - 1.0
    expected = gain * k * torch.sigmoid(k * z) * (1 - torch.sigmoid(k * z))
    torch.testing.assert_close(x.grad, expected)


def test_currents_are_recorded_for_the_perturbation_dynamic():
    lif = spiking.LIF(decay=0.9)
    lif.record = True
    i = torch.randn(4, 2, 3)
    lif(i)
    assert lif.currents is i


def test_synaptic_operations_on_hand_made_spikes():
    fc = nn.Linear(5, 4)
    spikes = torch.tensor([[1.0, 0, 1, 0, 0], [0, 0, 0, 0, 1]])  # 3 spikes, each reaching 4 outputs
    assert spiking.synaptic_ops(fc, spikes) == 12
    conv = nn.Conv2d(2, 3, 3, padding=1)
    x = torch.zeros(1, 2, 4, 4)
    x[0, 0, 0, 0] = 1  # a corner spike reaches the 2 x 2 outputs around it
    x[0, 1, 2, 2] = 1  # an inner spike reaches 3 x 3 outputs
    assert spiking.synaptic_ops(conv, x) == (4 + 9) * 3
    strided = nn.Conv2d(1, 2, 2, stride=2)  # non-overlapping 2 x 2 windows: each spike is seen once
    assert spiking.synaptic_ops(strided, torch.ones(1, 1, 4, 4)) == 16 * 2


def test_the_counter_separates_spikes_from_analog_input():
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 5))
    with torch.no_grad(), spiking.SOPCounter(model) as counter:
        model[0].weight.fill_(1.0)
        model[0].bias.fill_(-0.5)
        model(torch.tensor([[0.2, 0.3, 0.4]]))  # analog -> 3 x 2 MACs; relu(0.4) = 0.4 is not a spike: 2 x 5 MACs
        model[2](torch.tensor([[1.0, 0.0]]))  # one spike x 5 outputs
    assert counter.macs == 3 * 2 + 2 * 5 and counter.sops == 5
    assert not model[0]._forward_hooks  # removed on exit


def test_repeat_presents_the_input_at_every_step():
    x = torch.randn(2, 3)
    r = spiking.repeat(x, 4)
    assert r.shape == (4, 2, 3) and all(torch.equal(r[t], x) for t in range(4))


# --- images ------------------------------------------------------------------------------------------------------

def idx_bytes(array: np.ndarray) -> bytes:
    code = {np.dtype(np.uint8): 0x08}[array.dtype]
    return bytes([0, 0, code, array.ndim]) + np.array(array.shape, ">i4").tobytes() + array.tobytes()


def test_read_idx_known_answer(tmp_path):
    a = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "a.idx").write_bytes(idx_bytes(a))
    assert np.array_equal(images.read_idx(tmp_path / "a.idx"), a)
    (tmp_path / "short.idx").write_bytes(idx_bytes(a)[:-1])
    with pytest.raises(ValueError, match=r"header says \(2, 3, 4\)"):
        images.read_idx(tmp_path / "short.idx")
    (tmp_path / "csv.idx").write_bytes(b"a,b\n1,2\n")
    with pytest.raises(ValueError, match="not an IDX file"):
        images.read_idx(tmp_path / "csv.idx")


def test_a_member_is_read_from_a_debian_package(tmp_path):
    payload = gzip.compress(b"hello")
    tar_buf = io.BytesIO()
    with tarfile.open(fileobj=tar_buf, mode="w:xz") as tar:
        info = tarfile.TarInfo("./usr/share/x/hello.gz")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    members = [("debian-binary", b"2.0\n"), ("control.tar.xz", b"x"), ("data.tar.xz", tar_buf.getvalue())]
    deb = b"!<arch>\n" + b"".join(
        f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode() + body + b"\n" * (len(body) % 2)
        for name, body in members)
    (tmp_path / "p.deb").write_bytes(deb)
    assert gzip.decompress(F.deb_member(tmp_path / "p.deb", "usr/share/x/hello.gz")) == b"hello"
    with pytest.raises(KeyError):
        F.deb_member(tmp_path / "p.deb", "usr/share/x/missing")
    (tmp_path / "bad.deb").write_bytes(b"PK\x03\x04")
    with pytest.raises(F.DataError, match="not a Debian package"):
        F.deb_member(tmp_path / "bad.deb", "x")


def test_fashion_mnist_test_labels_come_from_the_debian_package(tmp_path):
    """The real archive: 10,000 test labels, 1,000 per class; a wrong suffix is refused with the fix."""
    out = tmp_path / "fashion_test_labels.idx"
    assert F.fetch("fashion_test_labels", out) == F.catalog()["datasets"]["fashion_test_labels"]["sha256"]
    labels = images.read_idx(out)
    assert labels.shape == (10000,) and np.bincount(labels).tolist() == [1000] * 10
    with pytest.raises(F.DataError, match=r"Fix: read it as data/raw/fashion_test_labels.idx"):
        F.fetch("fashion_test_labels", tmp_path / "fashion_test_labels.csv")


def test_a_balanced_subset_and_the_digits():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 10)
    idx = images.stratified_subset(labels, 4, rng)
    assert len(set(idx)) == 12 and np.bincount(labels[idx]).tolist() == [4, 4, 4]
    x, y = images.digits()
    assert x.shape == (1797, 1, 8, 8) and x.min() == 0 and x.max() == 1 and math.isclose(y.mean(), 4.49, abs_tol=0.02)


def test_the_image_set_of_a_source_is_the_split_of_that_source():
    a = images.image_set("digits", [], 5, 5, 397, np.random.default_rng(0))
    b = images.digits_split(397, np.random.default_rng(0))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert len(a["y_test"]) == 397 and len(a["y_train"]) == 1797 - 397


def test_the_surrogate_gradient_stays_finite_far_below_threshold():
    """snntorch's sigmoid surrogate gives NaN here (inf / inf); a membrane at -100 must pass a zero gradient."""
    lif = spiking.LIF(decay=0.5, slope=4.0)
    x = torch.tensor([[-200.0, -30.0, 0.5]], requires_grad=True)
    lif(x).sum().backward()
    assert torch.isfinite(x.grad).all() and x.grad[0, 0] == 0
