"""The shared language-model pieces (workflow/lib/tinylm.py, diffusion.py, arith.py, tokenizer.py): known answers."""
import numpy as np
import pytest
import torch

from workflow.lib import arith, diffusion
from workflow.lib.tinylm import Config, KVCache, TinyLM, as_bidirectional, warmup_cosine
from workflow.lib.tokenizer import CharVocab

torch.set_num_threads(1)


def model(causal, vocab=12, d=32, layers=2, heads=4, seed=0):
    torch.manual_seed(seed)
    return TinyLM(Config(vocab=vocab, d=d, layers=layers, heads=heads, causal=causal)).eval()


def test_the_cache_gives_the_logits_of_a_full_forward():
    m = model(causal=True)
    tokens = torch.randint(0, 12, (3, 10))
    with torch.no_grad():
        full = m(tokens)
        cache = KVCache(2)
        steps = [m(tokens[:, :4], cache=cache)] + [m(tokens[:, i:i + 1], cache=cache) for i in range(4, 10)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=0)
    assert len(cache) == 10


def test_crop_and_select_keep_the_cache_consistent():
    m = model(causal=True)
    tokens = torch.randint(0, 12, (3, 8))
    with torch.no_grad():
        full = m(tokens)
        cache = KVCache(2)
        m(tokens[:, :6], cache=cache)
        cache.crop(5)  # drop an unverified draft token, then feed it again
        again = m(tokens[:, 5:8], cache=cache)
        torch.testing.assert_close(again, full[:, 5:8], atol=1e-5, rtol=0)
        cache.select(torch.tensor([2, 0]))
        assert cache.k[0].shape[0] == 2 and cache.positions.shape == (2, 8)


def test_positions_only_rotate_so_a_shift_changes_nothing():
    """RoPE scores depend on position differences only: the same tokens at positions shifted by a constant give
    the same logits (causal and bidirectional), and positions that are not a shift do change them."""
    tokens = torch.randint(0, 12, (2, 7))
    for causal in (True, False):
        m = model(causal=causal)
        with torch.no_grad():
            torch.testing.assert_close(m(tokens, positions=torch.arange(7) + 40), m(tokens), atol=1e-5, rtol=0)
            assert not torch.allclose(m(tokens, positions=torch.tensor([3, 0, 6, 1, 5, 2, 4])), m(tokens), atol=1e-3)


def test_causal_attention_is_by_order_so_moved_tokens_stay_visible():
    """ReFusion's layout: tokens fed out of position order keep their position ids, and attention is causal over
    the order fed. In one layer, the last token fed sees every earlier one, whatever their positions, as a set: its
    logits do not depend on the order of the earlier ones (deeper layers would: the earlier tokens' own states do)."""
    m = model(causal=True, layers=1)
    tokens = torch.randint(0, 12, (1, 6))
    positions = torch.tensor([4, 5, 0, 1, 2, 3])  # two later slots first, then the earlier ones
    swapped = torch.tensor([2, 3, 0, 1, 4, 5])  # the first four fed in another order, the last two kept
    with torch.no_grad():
        a = m(tokens, positions=positions)
        b = m(tokens[:, swapped], positions=positions[swapped])
    torch.testing.assert_close(a[:, -1], b[:, -1], atol=1e-5, rtol=0)
    assert not torch.allclose(a[:, 0], b[:, 0], atol=1e-3)  # the first token fed sees only itself


def test_bidirectional_attention_sees_the_future_and_causal_does_not():
    a, b = torch.tensor([[1, 2, 3, 4]]), torch.tensor([[1, 2, 3, 9]])
    with torch.no_grad():
        causal, bidir = model(causal=True), model(causal=False)
        torch.testing.assert_close(causal(a)[:, :3], causal(b)[:, :3])
        assert not torch.allclose(bidir(a)[:, :3], bidir(b)[:, :3])


def test_a_bidirectional_copy_keeps_the_weights_and_agrees_with_its_causal_model_where_both_see_everything():
    """Known answer: in one layer the last position sees the whole sequence under either mask, so its logits are the
    causal model's; every earlier one now sees the future too and differs (with more layers the last position reads
    earlier states that saw the future, so only the weights agree)."""
    causal = model(causal=True, layers=1)
    bidir = as_bidirectional(causal).eval()
    assert not bidir.config.causal and causal.config.causal
    tokens = torch.randint(0, 12, (2, 7))
    with torch.no_grad():
        a, b = causal(tokens), bidir(tokens)
    torch.testing.assert_close(a[:, -1], b[:, -1], atol=1e-5, rtol=0)
    assert not torch.allclose(a[:, 0], b[:, 0], atol=1e-3)
    assert all(torch.equal(x, y) for x, y in zip(causal.state_dict().values(), bidir.state_dict().values()))
    bidir.head.weight.data.zero_()  # a copy, not shared tensors
    assert causal.head.weight.abs().sum() > 0


def test_the_shift_reads_each_positions_logits_from_the_position_before():
    """Dream's shift: a shifted copy's logits at i are the unshifted copy's at i - 1 (position 0 keeps its own), so
    an ARM's next-token head predicts the masked token it sits before; a causal model cannot be shifted."""
    causal = model(causal=True)
    plain, shifted = as_bidirectional(causal).eval(), as_bidirectional(causal, shift=True).eval()
    tokens = torch.randint(0, 12, (2, 7))
    with torch.no_grad():
        a, b = plain(tokens), shifted(tokens)
    torch.testing.assert_close(b[:, 1:], a[:, :-1])
    torch.testing.assert_close(b[:, 0], a[:, 0])
    with pytest.raises(ValueError, match="shift"):
        TinyLM(Config(vocab=12, d=32, layers=2, heads=4, causal=True, shift=True))


def test_a_two_layer_model_memorises_twenty_strings():
    """Next-token training on 20 random strings for 300 steps: greedy decoding from the first character then
    reproduces every string (a model that cannot learn would fail here, not in a paper's run)."""
    vocab = CharVocab("abcdefghij")
    rng = np.random.default_rng(0)
    # no letter twice in a string: with rotary positions alone, attention over a run of one token ("eee") gives the
    # same output at every length of the run, so a string's continuation after it would be unlearnable
    by_prefix = {}
    while len(by_prefix) < 20:  # three characters tell the strings apart
        text = "".join(rng.permutation(list("abcdefghij"))[:8])
        by_prefix.setdefault(text[:3], text)
    strings = list(by_prefix.values())
    data = torch.tensor([vocab.encode(s) for s in strings])
    m = TinyLM(Config(vocab=len(vocab), d=64, layers=2, heads=4, causal=True))
    torch.manual_seed(0)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-3)
    for _ in range(300):
        logits = m(data[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), data[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    m.eval()
    with torch.no_grad():
        out = data[:, :3]
        cache = KVCache(2)
        logits = m(out, cache=cache)
        for _ in range(5):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
            logits = m(nxt, cache=cache)
    assert [vocab.decode(r) for r in out] == strings


def test_masking_ratio_follows_t_and_the_prompt_is_never_masked():
    """The loss masks each response token with probability t ~ U(eps, 1): about half on average, never the prompt.
    A model that records what it was fed shows it."""
    seen = []

    class Recorder(torch.nn.Module):
        def forward(self, x):
            seen.append(x.clone())
            return torch.zeros(*x.shape, 5, requires_grad=True)

    prompt, response = torch.ones(4000, 3, dtype=torch.long), torch.full((4000, 6), 2)
    diffusion.masked_diffusion_loss(Recorder(), prompt, response, mask_id=4, generator=torch.Generator().manual_seed(0))
    x = seen[0]
    assert not (x[:, :3] == 4).any()
    assert abs((x[:, 3:] == 4).float().mean().item() - 0.5) < 0.02


def test_the_loss_weights_masked_tokens_by_one_over_t():
    """A uniform model (every logit 0) costs log(V) per masked token, weighted 1/t: the expectation of
    (masked count / t) / G is 1, so the loss is log V on average."""
    class Uniform(torch.nn.Module):
        def forward(self, x):
            return torch.zeros(*x.shape, 7)

    losses = [diffusion.masked_diffusion_loss(Uniform(), torch.ones(64, 2, dtype=torch.long), torch.ones(64, 16, dtype=torch.long),
                                              5, torch.Generator().manual_seed(s)).item() for s in range(50)]
    assert abs(np.mean(losses) / np.log(7) - 1) < 0.05


class Oracle(torch.nn.Module):
    """Predicts a fixed target sequence, more confidently at earlier positions (so confidence order = left to
    right) and with a runner-up at each position."""

    def __init__(self, target, vocab):
        super().__init__()
        self.target, self.vocab = target, vocab

    def forward(self, x):
        B, L = x.shape
        logits = torch.zeros(B, L, self.vocab)
        G = len(self.target)
        for j, t in enumerate(self.target):
            logits[:, L - G + j, t] = 10.0 - 0.1 * j
        return logits


def test_the_sampler_commits_every_position_once_block_by_block():
    target = [3, 4, 5, 6, 3, 4, 5, 6]
    m = Oracle(target, vocab=8)
    prompt = torch.zeros(2, 3, dtype=torch.long)
    for block in (1, 2, 4, 8):
        out = diffusion.sample(m, prompt, 8, steps=4, block=block, mask_id=7)
        assert out.tokens.tolist() == [target, target]
        blocks_of = torch.arange(8) // block
        # a later block never commits before an earlier one
        order = out.step_of[0]
        assert all(order[i] <= order[j] for i in range(8) for j in range(8) if blocks_of[i] < blocks_of[j])
        assert out.forwards == max(4, 8 // block) if block > 1 else out.forwards == 8


def test_two_tokens_per_step_and_the_confidence_orders():
    target = [3, 4, 5, 6]
    m = Oracle(target, vocab=8)
    out = diffusion.sample(m, torch.zeros(1, 2, dtype=torch.long), 4, steps=2, block=4, mask_id=7)
    assert out.step_of[0].tolist() == [0, 0, 1, 1]  # most confident (leftmost) first, two per step
    margin = diffusion.sample(m, torch.zeros(1, 2, dtype=torch.long), 4, steps=2, block=4, mask_id=7, remasking="margin")
    assert margin.step_of[0].tolist() == [0, 0, 1, 1]
    assert diffusion.transfer_counts(5, 3) == [2, 2, 1]


def test_gumbel_sampling_at_zero_temperature_is_argmax_and_is_seeded_otherwise():
    logits = torch.randn(4, 6, 9)
    assert torch.equal(diffusion.gumbel_max(logits, 0.0, None), logits.argmax(-1))
    a = diffusion.gumbel_max(logits, 0.9, torch.Generator().manual_seed(1))
    b = diffusion.gumbel_max(logits, 0.9, torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    counts = torch.stack([diffusion.gumbel_max(torch.log(torch.tensor([[0.7, 0.2, 0.1]])), 1.0,
                                               torch.Generator().manual_seed(s)) for s in range(2000)]).flatten()
    assert abs((counts == 0).float().mean().item() - 0.7) < 0.03  # at tau = 1 Gumbel-max samples the softmax


def test_generated_chains_are_right_by_the_reference_interpreter():
    pairs = arith.problems(seed=3, n=300)
    for prompt, response in pairs:
        assert arith.answer_of(response) == arith.solve(prompt)
        assert 2 <= arith.operations(prompt) <= 5
        assert len(prompt) <= arith.PROMPT_LEN and len(response) <= arith.GEN_LEN
    assert arith.solve("a=6,+5,*3,-5?") == 8 and arith.answer_of("+5=1,*3=3,-5=8#8") == 8
    assert len({p for p, _ in pairs}) == 300


def test_the_fields_sit_at_fixed_positions():
    prompt, response = "a=6,+5,*3,-5?", "+5=1,*3=3,-5=8#8"
    assert [prompt[4 + 3 * i: 6 + 3 * i] for i in range(3)] == ["+5", "*3", "-5"]
    assert [response[5 * i: 5 * i + 2] for i in range(3)] == ["+5", "*3", "-5"]


def test_held_out_prompts_never_reach_training():
    test = arith.problems(seed=0, n=200, max_ops=2)
    held = {p for p, _ in test}
    stream = arith.Stream(1, held, lambda rng: arith.problem(rng, 2, 2), arith.vocab())
    vocab = arith.vocab()
    for _ in range(20):
        prompts, _ = stream.batch(64)
        assert not {vocab.decode(p) for p in prompts} & held


def test_the_tokenizer_names_an_unknown_character_and_an_overflow():
    vocab = CharVocab("ab")
    assert vocab.decode(vocab.encode("ab", 4) + [vocab.eos, vocab.stoi["a"]]) == "ab"
    with pytest.raises(ValueError, match=r"\['z'\]"):
        vocab.encode("az")
    with pytest.raises(ValueError, match="more than the 1 allowed"):
        vocab.encode("ab", 1)


def test_warmup_then_cosine_to_zero():
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = warmup_cosine(opt, warmup=10, total=110)
    lrs = []
    for _ in range(110):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0) and lrs[60] == pytest.approx(0.5)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-9)


def test_the_eos_masked_loss_scores_each_row_up_to_its_first_eos_and_greedy_pads_after_it():
    from workflow.lib.tinylm import greedy, next_token_loss

    m = model(causal=True)
    prompt = torch.randint(3, 12, (2, 4))
    response = torch.tensor([[5, 6, 2, 2, 2], [7, 2, 2, 2, 2]])  # eos = 2
    with torch.no_grad():
        logits = m(torch.cat([prompt, response[:, :-1]], dim=1))[:, 3:]
        nll = -torch.log_softmax(logits, -1).gather(-1, response[..., None])[..., 0]
        expected = (nll[0, :3].sum() + nll[1, :2].sum()) / 5  # 3 tokens of row 0, 2 of row 1
        torch.testing.assert_close(next_token_loss(m, prompt, response, eos=2), expected)
        torch.testing.assert_close(next_token_loss(m, prompt, response), nll.mean())
        out = greedy(m, prompt, 6, eos=2)
    assert out.shape == (2, 6)
    for row in out.tolist():
        if 2 in row:
            assert set(row[row.index(2):]) == {2}


@pytest.mark.parametrize("eos_boost", [0.0, 3.0, 50.0])
def test_greedy_stopping_once_every_row_ended_equals_decoding_the_whole_length(eos_boost):
    """greedy stops early when every row has its <eos>; the result must equal plain full-length argmax decoding
    without a cache (boost 50: every row ends at once; 3: some rows end; 0: a random model)."""
    from workflow.lib.tinylm import greedy

    torch.manual_seed(1)
    m = model(causal=True)
    with torch.no_grad():
        m.head.weight[2] += eos_boost * m.head.weight[2].sign()  # eos = 2: more likely after some inputs
        prompt = torch.randint(3, 12, (6, 4))
        x = prompt
        for _ in range(8):
            x = torch.cat([x, m(x)[:, -1].argmax(-1, keepdim=True)], 1)
        full = x[:, 4:]
        full = torch.where((full == 2).cumsum(1) > 0, torch.full_like(full, 2), full)
        torch.testing.assert_close(greedy(m, prompt, 8, eos=2), full)
