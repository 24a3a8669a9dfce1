"""HEX's pieces on top of the shared tiny LM (workflow/lib/tinylm.py) and masked-diffusion sampler
(workflow/lib/diffusion.py): the model, its training loop, and every decoder the paper compares, run on a set of
problems into one table row per (decoder, problem)."""
from __future__ import annotations

import zlib
from dataclasses import replace

import torch

from workflow.lib import arith, diffusion
from workflow.lib.tinylm import Config, Schedule, TinyLM, as_bidirectional, fit, next_token_loss

from . import plan

GEN_LEN = arith.GEN_LEN


def build(p: dict, vocab_size: int) -> TinyLM:
    """The bidirectional masked-diffusion model (LLaDA's encoder); p: the hex.model section (shift: Dream's shift, the
    logits of position i read from position i - 1, which keeps an initialising ARM's next-token head)."""
    return TinyLM(Config(vocab=vocab_size, d=p["d"], layers=p["layers"], heads=p["heads"], causal=False, shift=p["shift"]))


def schedule(p: dict) -> Schedule:
    """The training loop's knobs of the hex.train section."""
    return Schedule(steps=p["steps"], lr=p["lr"], weight_decay=p["weight_decay"], warmup=p["warmup"],
                    curve_every=p["curve_every"])


def train(model: TinyLM, p: dict, seed: int, held_out: set[str], curve, arm_curve=None) -> float:
    """LLaDA SFT on fresh problems every step (none of them a validation or test prompt); returns the mean loss of
    the last curve interval. curve(step, mean loss) gets a point every `curve_every` steps. p: the hex.data and
    hex.train sections. The stream's chains have min_ops..stream_max_ops operations: it covers the long split's length
    (the calibration found no generalisation to a chain longer than any trained one, PAPER.md).

    With `arm_init.steps` > 0 the model starts from an autoregressive model of the same size trained first on the same
    stream (next-token loss up to the first <eos>, its own learning rate; arm_curve gets its loss points), its weights
    copied into the bidirectional model (tinylm.as_bidirectional): an MDM initialised from an ARM, as Dream-7B is from
    Qwen2.5 (with Dream's shift when hex.model.shift). The calibration (PAPER.md) found the MDM from scratch learning
    the task in one seed of three."""
    stream = arith.Stream(seed, held_out, lambda rng: arith.problem(rng, p["min_ops"], p["stream_max_ops"]), arith.vocab())
    init = p["arm_init"]
    if init["steps"]:
        torch.manual_seed(seed)  # the ARM's initial weights from the seed alone (as the calibration pilots drew them)
        arm = TinyLM(replace(model.config, causal=True, shift=False))
        fit(arm, lambda: next_token_loss(arm, *stream.batch(p["batch"]), eos=stream.vocab.eos),
            replace(schedule(p), steps=init["steps"], lr=init["lr"]), arm_curve or (lambda s, v: None))
        model.load_state_dict(as_bidirectional(arm, shift=model.config.shift).state_dict())
    noise = torch.Generator().manual_seed(seed)
    return fit(model, lambda: diffusion.masked_diffusion_loss(model, *stream.batch(p["batch"]), stream.vocab.mask, noise),
               schedule(p), curve)


def sampling_seed(model_seed: int, decoder: str) -> int:
    """A path's Gumbel noise: fixed by the model's seed and the decoder's name, independent of run order."""
    return zlib.crc32(f"{model_seed}/{decoder}".encode())


def decoders(decode: dict, sc_block: int | None) -> list[dict]:
    """Every decoder of one decoding job, in plan order (plan.py names them). Without sc_block: the greedy ones
    only (what the validation split needs to choose self-consistency's block)."""
    out = [dict(decoder=f"one/{r}", family="one", block=GEN_LEN, remasking=r, temperature=0.0, path_seed=0)
           for r in decode["one_block"]]
    out += [dict(decoder=f"fixed/b{b}", family="fixed", block=b, remasking="low_confidence", temperature=0.0,
                 path_seed=0) for b in decode["fixed_blocks"]]
    if sc_block is None:
        return out
    for name in plan.ARMS:
        arm = decode["arms"][name]
        out += [dict(decoder=d, family=name, block=b, remasking="low_confidence", temperature=arm["temperature"],
                     path_seed=k) for d, b, k in plan.arm_paths(arm, name)]
        for family in (f"sc_{name}", f"sc2_{name}"):  # sc2: an independent draw of the same decoder
            out += [dict(decoder=f"{family}/s{k}", family=family, block=sc_block, remasking="low_confidence",
                         temperature=arm["temperature"], path_seed=k) for k in range(plan.paths_of(arm))]
    return out


def collapsed(tokens: torch.Tensor, vocab) -> bool:
    """EOS collapse: no answer ('#') before the first <eos> (the response was filled with <eos> early)."""
    return "#" not in vocab.decode(tokens)


def run(model: TinyLM, problems: list[tuple[str, str]], spec: dict, steps: int, model_seed: int, vocab):
    """One decoder on a set of problems: (rows, eos curve). Rows: one per problem; the eos curve: the fraction of
    response positions committed as <eos> after each denoising step (the collapse figure)."""
    prompts, _ = arith.encode(vocab, problems)
    noise = torch.Generator().manual_seed(sampling_seed(model_seed, spec["decoder"]))
    out = diffusion.sample(model, prompts, GEN_LEN, steps, spec["block"], vocab.mask, spec["remasking"],
                           spec["temperature"], noise)
    rows = []
    for i, ((prompt, _), tokens) in enumerate(zip(problems, out.tokens)):
        answer = arith.answer_of(vocab.decode(tokens))
        truth = arith.solve(prompt)
        rows.append(spec | dict(problem=i, ops=arith.operations(prompt), answer=answer, truth=truth,
                                correct=answer == truth, collapsed=collapsed(tokens, vocab),
                                nll=float(out.nll[i]), forwards=out.forwards))
    is_eos = out.tokens == vocab.eos
    last = int(out.step_of.max())
    curve = [dict(decoder=spec["decoder"], step=s + 1, eos_fraction=float((is_eos & (out.step_of <= s)).float().mean()))
             for s in range(last + 1)]
    return rows, curve


def best_block(rows: list[dict], blocks: list[int]) -> int:
    """The fixed block with the highest accuracy on these (validation) rows; ties go to the smaller block."""
    accuracy = {b: sum(r["correct"] for r in rows if r["decoder"] == f"fixed/b{b}") for b in blocks}
    return max(sorted(blocks), key=lambda b: accuracy[b])
