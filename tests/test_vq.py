"""workflow/lib/vq.py: vector quantisation with known answers (nearest code, straight-through gradient, the
hierarchical codebook's restriction to a group, EMA updates, dead-code restart) and the 16x16 encoder/decoder."""
import pytest
import torch

from workflow.lib.vq import VectorQuantizer, decoder, encoder, grid_rows, rows_grid

torch.set_num_threads(1)


def fixed(n_codes, dim, codes, **kw):
    vq = VectorQuantizer(n_codes, dim, **kw)
    vq.codes.copy_(torch.tensor(codes))
    vq.ema_sum.copy_(vq.codes)
    return vq


def test_each_row_takes_its_nearest_code():
    vq = fixed(3, 2, [[0.0, 0.0], [1.0, 0.0], [0.0, 5.0]]).eval()
    z = torch.tensor([[0.1, 0.1], [0.9, -0.2], [0.2, 3.0], [0.6, 0.0]])
    q, idx, _ = vq(z)
    assert idx.tolist() == [0, 1, 2, 1]
    torch.testing.assert_close(q, vq.codes[idx])


def test_cosine_codes_match_by_direction_not_length():
    vq = fixed(2, 2, [[1.0, 0.0], [0.0, 1.0]], cosine=True).eval()
    _, idx, _ = vq(torch.tensor([[10.0, 1.0], [0.1, 3.0]]))
    assert idx.tolist() == [0, 1]


def test_the_gradient_passes_straight_through_the_quantiser():
    vq = fixed(2, 2, [[0.0, 0.0], [1.0, 1.0]], beta=0.0).eval()
    z = torch.tensor([[0.2, 0.1], [0.8, 0.7]], requires_grad=True)
    q, _, _ = vq(z)
    (q * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    torch.testing.assert_close(z.grad, torch.tensor([[1.0, 2.0], [3.0, 4.0]]))  # identity, as if q were z


def test_a_hierarchical_codebook_assigns_only_inside_the_named_group():
    # 2 groups of 2 codes; the input lies on code 3 (group 1), but group 0 is named: the nearest of codes 0, 1
    vq = fixed(4, 1, [[0.0], [1.0], [2.0], [3.0]], groups=2).eval()
    _, idx, _ = vq(torch.tensor([[3.0], [3.0], [0.2]]), group=torch.tensor([0, 1, 1]))
    assert idx.tolist() == [1, 3, 2]
    with pytest.raises(ValueError, match="group index"):
        vq(torch.tensor([[3.0]]))
    with pytest.raises(ValueError, match="equal sub-codebooks"):
        VectorQuantizer(5, 1, groups=2)


def test_ema_moves_a_code_to_the_mean_of_its_inputs():
    vq = fixed(2, 1, [[0.0], [10.0]], decay=0.5, restart_every=0).train()
    for _ in range(12):
        vq(torch.tensor([[1.0], [3.0]]))  # both nearest to code 0; their mean is 2
    assert vq.codes[0].item() == pytest.approx(2.0, abs=1e-3)
    # unused: its sum and count decay alike (until the count nears the smoothing eps: dead codes need restarts)
    assert vq.codes[1].item() > 9.0


def test_a_dead_code_is_restarted_from_the_batch_of_its_group():
    torch.manual_seed(0)
    vq = fixed(4, 1, [[0.0], [100.0], [50.0], [-100.0]], groups=2, restart_every=2).train()
    z, group = torch.tensor([[0.5], [0.4], [50.5], [49.0]]), torch.tensor([0, 0, 1, 1])
    vq(z, group)
    vq(z, group)  # second call: codes 1 (group 0) and 3 (group 1) were never used -> restarted
    assert min(abs(vq.codes[1].item() - v) for v in (0.5, 0.4)) < 1e-6
    assert min(abs(vq.codes[3].item() - v) for v in (50.5, 49.0)) < 1e-6


def test_the_encoder_and_decoder_map_16x16_images_to_a_4x4_grid_and_back():
    x = torch.rand(2, 3, 16, 16)
    z = encoder(3, 8)(x)
    assert z.shape == (2, 8, 4, 4)
    rows = grid_rows(z)
    assert rows.shape == (32, 8)
    torch.testing.assert_close(rows_grid(rows, 2, 4, 4), z)
    torch.testing.assert_close(rows[5], z[0, :, 1, 1])  # row-major: patch 5 is (row 1, column 1)
    out = decoder(8, 3)(z)
    assert out.shape == (2, 3, 16, 16) and out.min() >= 0 and out.max() <= 1
