"""workflow/lib/flow.py: rectified flow with known answers (the exact velocity of a point target carries any noise
onto it; of a Gaussian target, its mean and spread; a perfect data prediction's velocity reaches the data), the loss
that a small network learns down on a toy target, and classifier-free guidance's arithmetic."""
import pytest
import torch
from torch import nn

from workflow.lib.flow import euler_sample, flow_matching_loss, from_data, guided, preconditioned

torch.set_num_threads(1)


def test_the_exact_velocity_of_a_point_target_lands_on_it():
    target = torch.tensor([2.0, -1.0, 0.5])
    velocity = lambda x, t: (target - x) / (1 - t[:, None])  # noqa: E731  (x_t's velocity towards x1 = target)
    noise = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
    out = euler_sample(velocity, noise, steps=7)
    torch.testing.assert_close(out, target.expand(64, -1), atol=1e-5, rtol=0)


def test_the_exact_velocity_of_a_shifted_gaussian_keeps_its_spread():
    # x1 = x0 + mu: the path moves every point by mu at a constant velocity, one Euler step is exact
    mu = torch.tensor([3.0, -2.0])
    noise = torch.randn(4000, 2, generator=torch.Generator().manual_seed(1))
    out = euler_sample(lambda x, t: mu.expand(len(x), -1), noise, steps=1)
    torch.testing.assert_close(out.mean(0), mu, atol=0.1, rtol=0)
    torch.testing.assert_close(out.std(0), torch.ones(2), atol=0.05, rtol=0)


def test_a_small_network_learns_a_two_point_target_and_samples_both_points():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    points = torch.tensor([[-2.0, 0.0], [2.0, 0.0]])
    net = nn.Sequential(nn.Linear(3, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 2))
    velocity = lambda x, t: net(torch.cat([x, t[:, None]], 1))  # noqa: E731
    opt = torch.optim.Adam(net.parameters(), 3e-3)
    losses = []
    for _ in range(1500):
        x1 = points[torch.randint(2, (128,), generator=g)]
        loss = flow_matching_loss(velocity, x1, g)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert sum(losses[-100:]) / 100 < 0.6 * sum(losses[:100]) / 100
    out = euler_sample(velocity, torch.randn(400, 2, generator=g), steps=20)
    near = torch.cdist(out, points).min(1).values
    assert (near < 0.5).float().mean() > 0.8  # a sample commits to one point, not their mean (0, 0)
    assert 0.25 < (out[:, 0] > 0).float().mean() < 0.75  # and both points are drawn


def test_guidance_is_the_unconditional_velocity_pushed_towards_the_conditional_one():
    cond = lambda x, t: torch.ones_like(x)  # noqa: E731
    uncond = lambda x, t: torch.zeros_like(x)  # noqa: E731
    x, t = torch.zeros(2, 3), torch.zeros(2)
    assert guided(cond, uncond, 1.0) is cond
    torch.testing.assert_close(guided(cond, uncond, 3.0)(x, t), torch.full((2, 3), 3.0))


def test_sampling_without_steps_is_an_error():
    with pytest.raises(ValueError, match="at least one step"):
        euler_sample(lambda x, t: x, torch.zeros(1, 2), steps=0)


def test_a_data_prediction_becomes_the_velocity_that_reaches_it():
    target = torch.tensor([1.0, -3.0])
    velocity = from_data(lambda x, t: target.expand(len(x), -1))  # a perfect denoiser of a point target
    x, t = torch.zeros(1, 2), torch.tensor([0.25])
    torch.testing.assert_close(velocity(x, t), (target / 0.75)[None])  # (x1 - x_t) / (1 - t)
    out = euler_sample(velocity, torch.randn(16, 2, generator=torch.Generator().manual_seed(2)), steps=5)
    torch.testing.assert_close(out, target.expand(16, -1), atol=1e-5, rtol=0)


def test_the_preconditioned_prediction_is_the_network_at_noise_and_x_at_the_data():
    x, f = torch.full((2, 3), 5.0), torch.full((2, 3), -1.0)
    torch.testing.assert_close(preconditioned(f, x, torch.zeros(2)), f)  # t = 0: all noise, the network's guess
    torch.testing.assert_close(preconditioned(f, x, torch.ones(2)), x)  # t = 1: x_t is the data
    # in between: the posterior mean of unit-variance Gaussian data given x_t when the network says 0
    t = torch.full((2,), 0.5)
    torch.testing.assert_close(preconditioned(torch.zeros(2, 3), x, t), x * 0.5 / 0.5)
