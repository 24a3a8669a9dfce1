"""ReFusion's pieces on the shared tiny LM (workflow/lib/tinylm.py): the two tasks, the three models' objectives
(ARM next-token, MDM masked diffusion, ReFusion's slot objective) and their decoders, each counting its forwards and
query-token evaluations.

ReFusion (spec shared/papers/refusion.md 4.3, the repo's `forward_process` and `generate_refusion`):
  * training: the response is cut into slots of k tokens (k drawn per batch); each slot is masked with probability
    p = (1 - eps) t + eps, t ~ U(0, 1); the clean slots go first in a random order, the masked ones after in their
    original order, every token keeping its original position id; causal attention over that order. Loss =
    next-token CE inside each clean slot (its last token unlabelled) + masked-token CE / p summed over the batch /
    (G B);
  * decoding: slots are filled block by block (serial blocks, left to right). A round plans (one forward over every
    masked slot of the block after the committed prefix: draft tokens and each slot's first-token probability),
    selects the slots whose first token is more likely than tau_slot (at least the best one), verifies their
    drafts in one causal forward appended to the cache (token j > 1 of a slot by the AR probability of the token
    before it, token 1 by the plan's), and keeps the longest prefix of whole slots whose tokens all pass tau_tok.
    When no whole slot passes, each selected slot is completed on its own: its unverified suffix is re-masked and
    predicted in parallel, then verified, keeping at least one token per iteration. Committed slots stay in the KV
    cache (appended in commit order, with their original positions), so the prefix is never recomputed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from workflow.lib import arith, diffusion
from workflow.lib.arith import encode  # both tasks fit the chains' prompt and answer lengths
from workflow.lib.tinylm import Config, KVCache, Schedule, TinyLM, fit, greedy, next_token_loss

from . import tasks

MODELS = ("arm", "mdm", "refusion")
PROMPT_LEN, GEN_LEN, TASKS = tasks.PROMPT_LEN, tasks.GEN_LEN, tasks.TASKS
vocab, problems, correct = tasks.vocab, tasks.problems, tasks.correct


def build(p: dict, kind: str, vocab_size: int) -> TinyLM:
    """ARM and ReFusion: causal; MDM: bidirectional. Same size for all three (the spec's controlled comparison)."""
    return TinyLM(Config(vocab=vocab_size, d=p["d"], layers=p["layers"], heads=p["heads"], causal=kind != "mdm"))


# ---- training ----------------------------------------------------------------------------------------------

def refusion_loss(model: TinyLM, prompt: torch.Tensor, response: torch.Tensor, k: int, mask_id: int,
                  generator: torch.Generator, eps: float = 1e-3) -> torch.Tensor:
    """ReFusion's hybrid objective for one batch with slot size k (see the module docstring)."""
    B, G = response.shape
    n = G // k
    t = torch.rand(B, 1, generator=generator)
    p = (1 - eps) * t + eps
    masked = torch.rand(B, n, generator=generator) < p                        # (B, n) per slot
    key = torch.where(masked, 1.0 + torch.arange(n).float(), torch.rand(B, n, generator=generator))
    order = key.argsort(dim=1)                                                # clean slots first (random), then masked
    index = (order[:, :, None] * k + torch.arange(k)).reshape(B, G)          # response position of each fed token
    fed_masked = masked.gather(1, order).repeat_interleave(k, dim=1)          # (B, G)
    targets = response.gather(1, index)
    tokens = torch.where(fed_masked, torch.full_like(targets, mask_id), targets)
    positions = torch.cat([torch.arange(PROMPT_LEN).expand(B, -1), PROMPT_LEN + index], dim=1)
    logits = model(torch.cat([prompt, tokens], dim=1), positions=positions)[:, PROMPT_LEN:]
    ce = F.cross_entropy(logits.reshape(B * G, -1), targets.reshape(-1), reduction="none").view(B, G)
    mdm = (ce * fed_masked / p).sum() / (B * G)
    # inside a clean slot, token j (not the slot's last) predicts token j + 1 of the same slot
    within = (torch.arange(G) % k != k - 1).expand(B, -1) & ~fed_masked
    nxt = F.cross_entropy(logits[:, :-1].reshape(B * (G - 1), -1), targets[:, 1:].reshape(-1),
                          reduction="none").view(B, G - 1)
    labelled = within[:, :-1]
    arm = (nxt * labelled).sum() / labelled.sum().clamp_min(1)
    return arm + mdm


def train(model: TinyLM, kind: str, p: dict, seed: int, held_out: set[str], curve) -> float:
    """The same stream, steps, batch and optimiser for every model; the objective differs, and the learning rate is
    each model family's own (p["lr"][kind], chosen on the validation problems)."""
    stream = arith.Stream(seed, held_out, lambda rng: tasks.draw(TASKS[int(rng.integers(0, len(TASKS)))], rng, p),
                          vocab())  # each task with equal probability
    noise = torch.Generator().manual_seed(seed)

    def batch_loss():
        prompt, response = stream.batch(p["batch"])
        if kind == "arm":
            return next_token_loss(model, prompt, response)
        if kind == "mdm":
            return diffusion.masked_diffusion_loss(model, prompt, response, stream.vocab.mask, noise)
        k = p["slot_sizes"][int(torch.randint(len(p["slot_sizes"]), (1,), generator=noise))]
        return refusion_loss(model, prompt, response, k, stream.vocab.mask, noise)

    return fit(model, batch_loss, Schedule(steps=p["steps"], lr=p["lr"][kind], weight_decay=p["weight_decay"],
                                           warmup=p["warmup"], curve_every=p["curve_every"]), curve)


# ---- decoding ----------------------------------------------------------------------------------------------

@dataclass
class Counts:
    forwards: int = 0       # model calls after the prompt's prefill
    queries: int = 0        # query positions those calls processed (the dominant FLOP term)
    queries_full: int = 0   # what they would have processed re-feeding the prefix at every call (no KV cache)


@dataclass
class Prefix:
    """The committed sequence a decoder attends to: in a KV cache (reused), or re-fed whole at every call (the
    no-cache control). `run` returns the logits of the new tokens and keeps them in the prefix only if asked."""
    model: TinyLM
    use_cache: bool
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self):
        self.cache = KVCache(self.model.config.layers)
        self.tokens = torch.zeros(1, 0, dtype=torch.long)
        self.positions = torch.zeros(1, 0, dtype=torch.long)

    def prefill(self, prompt: torch.Tensor) -> torch.Tensor:
        return self.run(prompt, torch.arange(prompt.shape[1])[None], keep=True, counted=False)

    def drop_last(self, m: int) -> None:
        if m:
            self.tokens, self.positions = self.tokens[:, :-m], self.positions[:, :-m]
            if self.use_cache:
                self.cache.crop(len(self.cache) - m)

    def run(self, tokens, positions, keep: bool, counted: bool = True) -> torch.Tensor:
        n, before = tokens.shape[1], self.tokens.shape[1]
        if self.use_cache:
            logits = self.model(tokens, positions=positions, cache=self.cache)
            if not keep:
                self.cache.crop(before)
        else:
            logits = self.model(torch.cat([self.tokens, tokens], 1), positions=torch.cat([self.positions, positions], 1))[:, -n:]
        if keep:
            self.tokens, self.positions = torch.cat([self.tokens, tokens], 1), torch.cat([self.positions, positions], 1)
        if counted:
            self.counts.forwards += 1
            self.counts.queries += n if self.use_cache else before + n
            self.counts.queries_full += before + n
        return logits


def answer_length(tokens: list[int], eos: int) -> int:
    """Generated tokens: up to and including the first <eos> (all G if there is none)."""
    return tokens.index(eos) + 1 if eos in tokens else len(tokens)


@torch.no_grad()
def arm_decode(model: TinyLM, prompt: torch.Tensor, eos: int, use_cache: bool = True) -> tuple[list[int], Counts]:
    """Greedy next-token decoding of one prompt (1, P), stopping at <eos>."""
    prefix = Prefix(model, use_cache)
    logits = prefix.prefill(prompt)
    prefix.counts = Counts(1, 1, 1)  # the prefill's last position gives the first token: one forward, one query
    out = []
    for i in range(GEN_LEN):
        token = int(logits[0, -1].argmax())
        out.append(token)
        if token == eos or len(out) == GEN_LEN:
            break
        logits = prefix.run(torch.tensor([[token]]), torch.tensor([[PROMPT_LEN + i]]), keep=True)
    return out + [eos] * (GEN_LEN - len(out)), prefix.counts


@torch.no_grad()
def arm_decode_batch(model: TinyLM, prompts: torch.Tensor, eos: int) -> torch.Tensor:
    """Greedy decoding of a batch with the cache (for accuracy; every row runs G steps, ends filled with <eos>)."""
    return greedy(model, prompts, GEN_LEN, eos)


@dataclass(frozen=True)
class Setting:
    """A ReFusion decoding setting (spec defaults k = 4, 2 serial blocks, tau_slot 0.9, tau_tok 0.6)."""
    slot: int = 4
    serial_blocks: int = 2
    tau_slot: float = 0.9
    tau_tok: float = 0.6


@torch.no_grad()
def refusion_decode(model: TinyLM, prompt: torch.Tensor, s: Setting, mask: int, eos: int,
                    use_cache: bool = True) -> tuple[list[int], Counts, list[int]]:
    """Plan-and-infill decoding of one prompt (1, P): (response tokens, counts, the round at which each slot was
    committed)."""
    prefix = Prefix(model, use_cache)
    prefix.prefill(prompt)
    k, n = s.slot, GEN_LEN // s.slot
    tokens: list[int | None] = [None] * GEN_LEN
    round_of = [-1] * n
    per_block = math.ceil(n / s.serial_blocks)
    rounds = 0

    def slot_positions(slot):
        return PROMPT_LEN + slot * k + torch.arange(k)

    def finished() -> bool:  # an <eos> committed with every slot before it committed
        for slot in range(n):
            if round_of[slot] < 0:
                return False
            if eos in tokens[slot * k:(slot + 1) * k]:
                return True
        return True

    def commit(slot, values):
        tokens[slot * k:(slot + 1) * k] = values
        round_of[slot] = rounds

    for block in range(s.serial_blocks):
        group = range(block * per_block, min(n, (block + 1) * per_block))
        while not finished() and any(round_of[slot] < 0 for slot in group):
            masked = [slot for slot in group if round_of[slot] < 0]
            positions = torch.cat([slot_positions(slot) for slot in masked])[None]
            plan = prefix.run(torch.full_like(positions, mask), positions, keep=False).softmax(-1)[0]
            draft = plan.argmax(-1).view(len(masked), k)
            first = plan.max(-1).values.view(len(masked), k)[:, 0]
            chosen = [i for i in range(len(masked)) if first[i] > s.tau_slot] or [int(first.argmax())]
            selected = [masked[i] for i in chosen]
            drafts = draft[chosen]                                   # (m, k) in position order
            fed = drafts.reshape(1, -1)
            fed_positions = torch.cat([slot_positions(slot) for slot in selected])[None]
            verify = prefix.run(fed, fed_positions, keep=True).softmax(-1)[0].view(len(selected), k, -1)
            probs = torch.ones(len(selected), k)
            probs[:, 0] = first[chosen]
            probs[:, 1:] = verify[:, :-1].gather(-1, drafts[:, 1:, None])[..., 0]
            passed = (probs > s.tau_tok).reshape(-1).tolist()
            good = next((i for i, ok in enumerate(passed) if not ok), len(passed)) // k   # whole slots in the prefix
            prefix.drop_last((len(selected) - good) * k)  # the verify pass's keys of the accepted slots stay
            if good:
                for slot, values in zip(selected[:good], drafts[:good].tolist()):
                    commit(slot, values)
            else:
                for slot, values in zip(selected, drafts.tolist()):
                    commit(slot, infill(prefix, slot_positions(slot)[None], values[:1], s.tau_tok, mask))
                    prefix.run(torch.tensor([tokens[slot * k:(slot + 1) * k]]), slot_positions(slot)[None], keep=True)
            rounds += 1
    filled = [eos if t is None else t for t in tokens]
    length = answer_length(filled, eos)
    return filled[:length] + [eos] * (GEN_LEN - length), prefix.counts, round_of


def infill(prefix: Prefix, positions: torch.Tensor, verified: list[int], tau_tok: float, mask: int) -> list[int]:
    """Complete one slot from its verified first token(s): re-mask the rest, predict it in parallel (an MDM pass),
    verify the prediction autoregressively (an AR pass), keep the longest passing prefix (at least one token)."""
    k = positions.shape[1]
    while len(verified) < k:
        guess = prefix.run(torch.tensor([verified + [mask] * (k - len(verified))]), positions, keep=False)[0]
        suffix = guess[len(verified):].argmax(-1).tolist()
        check = prefix.run(torch.tensor([verified + suffix]), positions, keep=False)[0].softmax(-1)
        p = [float(check[len(verified) - 1 + j, tok]) for j, tok in enumerate(suffix)]
        keep = next((j for j, x in enumerate(p) if x <= tau_tok), len(p))
        verified = verified + suffix[:max(1, keep)]
    return verified
