"""The model, its two trainings and its evaluation (torch): a character-level causal transformer (the shared tiny
LM) pretrained once per seed on real English (Jane Austen's novels) mixed with the priming set, then finetuned per
variant on instruction -> response pairs (loss on the response only) with the priming set replayed, then scored
by greedy decoding on the three tasks (the answer read after 'ANSWER:')."""
from __future__ import annotations

import numpy as np
import torch

from workflow.lib.tinylm import Config, Schedule, TinyLM, fit, greedy, next_token_loss, teacher_forced_logits
from workflow.lib.tokenizer import CharVocab

from . import world as W
from .sets import every_item


def vocab() -> CharVocab:
    return CharVocab(W.ALPHABET)


def build(p: dict, vocab_size: int) -> TinyLM:
    return TinyLM(Config(vocab=vocab_size, d=p["d"], layers=p["layers"], heads=p["heads"], causal=True,
                         max_positions=W.PROMPT_LEN + W.RESPONSE_LEN))


def schedule(p: dict) -> Schedule:
    """The training loop's knobs of a code_reasoning.base or code_reasoning.sft section."""
    return Schedule(steps=p["steps"], lr=p["lr"], weight_decay=p["weight_decay"], warmup=p["warmup"],
                    curve_every=p["curve_every"])


def encode(vocab: CharVocab, pairs) -> tuple[torch.Tensor, torch.Tensor]:
    """(prompts right-padded to PROMPT_LEN, responses <eos>-filled to RESPONSE_LEN)."""
    prompts = torch.tensor([vocab.encode(q, W.PROMPT_LEN) for q, _ in pairs])
    responses = torch.tensor([vocab.encode(r, W.RESPONSE_LEN, fill=vocab.eos) for _, r in pairs])
    return prompts, responses


def english(text: str) -> str:
    """Austen's text in the model's alphabet (other characters, e.g. curly quotes, become spaces)."""
    allowed = set(W.ALPHABET)
    return "".join(c if c in allowed else " " for c in text)


# The continuation of a prose window: about as long as the priming set's longest solutions (worked steps of 3-4
# statements: at most 85 characters, measured), so that no base batch is padded to the full response length (256)
# for its prose alone (a causal model is fed up to the batch's last scored token: 224 characters a row, not 384)
PROSE_LEN = 96


def prose_pairs(text: str, rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    """n random windows of the text, split into a prompt and its continuation (plain language modelling in the
    same layout as the tasks)."""
    starts = rng.integers(0, len(text) - W.PROMPT_LEN - PROSE_LEN, size=n)
    return [(text[s:s + W.PROMPT_LEN], text[s + W.PROMPT_LEN:s + W.PROMPT_LEN + PROSE_LEN]) for s in starts]


DRILL_PROMPT = "Sums mod 10:"


def table_drill(rng: np.random.Generator, n: int, facts: int = 10) -> list[tuple[str, str]]:
    """n rows of the table of single-digit sums and differences mod 10 ("Sums mod 10:" -> "7+9=6 3-4=9 ..."), the
    operations of every worked step: the arithmetic a pretrained base brings to its finetuning. A base that has not
    learnt it stays on the plateau where the worked steps have their form but not their results (PAPER.md), so
    `pretrain` drills it first."""
    def fact() -> str:
        a, k, plus = int(rng.integers(10)), int(rng.integers(1, 10)), bool(rng.integers(2))
        return f"{a}{'+' if plus else '-'}{k}={(a + k if plus else a - k) % 10}"

    return [(DRILL_PROMPT, " ".join(fact() for _ in range(facts))) for _ in range(n)]


def base_batches(text: str, priming: dict, p: dict, rng: np.random.Generator):
    """A draw of one base batch of (prompt, response): a share `prose` of Austen windows, a share `nl` of the priming
    set's NL questions, a share `drill` of the sums table (`table_drill`), the rest its math and code items alike
    (the worked steps, from which execution is learnt)."""
    programs, nl = priming["math"] + priming["code"], priming["nl"]
    n_prose, n_nl, n_drill = (int(round(p["batch"] * p[share])) for share in ("prose", "nl", "drill"))

    def draw() -> list[tuple[str, str]]:
        pairs = [programs[i] for i in rng.integers(0, len(programs), size=p["batch"] - n_prose - n_nl - n_drill)]
        pairs += [nl[i] for i in rng.integers(0, len(nl), size=n_nl)]
        return prose_pairs(text, rng, n_prose) + pairs + table_drill(rng, n_drill)

    return draw


DRILL_STREAM = 10_000  # the drill phase draws from a generator of its own (seed + this), so that the base batches after
                       # it are the ones a base without it draws (pilot H2 was paired so); its check rows from this - 1
DRILL_CHECK_EVERY = 100  # steps between two checks of the drill phase


@torch.no_grad()
def results_right(model: TinyLM, vocab: CharVocab, rows: list[tuple[str, str]]) -> float:
    """The share of the drill rows' results (the digit after each '=') the model predicts, teacher-forced."""
    prompt, response = encode(vocab, rows)
    was_training = model.training
    model.eval()
    predicted = teacher_forced_logits(model, prompt, response).argmax(-1)
    model.train(was_training)
    at = [(i, j) for i, (_, r) in enumerate(rows) for j in range(1, len(r)) if r[j - 1] == "="]
    return sum(bool(predicted[i, j] == response[i, j]) for i, j in at) / len(at)


def pretrain(model: TinyLM, vocab: CharVocab, text: str, priming: dict, p: dict, seed: int,
             curve) -> tuple[float, int]:
    """The base model: first the sums table alone (`table_drill`), until it predicts `drill_until` of the results of 64
    fixed check rows (every DRILL_CHECK_EVERY steps; the table has 180 facts, all drilled: the check asks whether it
    is learnt) or for at most `drill_steps` steps: the arithmetic a pretrained base brings, which the worked steps then
    use; then base batches (`base_batches`), all within one schedule. Returns the last loss and the drill's steps."""
    draw = base_batches(text, priming, p, np.random.default_rng(seed))
    drill_rng = np.random.default_rng(DRILL_STREAM + seed)
    check_rows = table_drill(np.random.default_rng(DRILL_STREAM - 1), 64)
    phase = {"drilled": 0, "done": p["drill_steps"] == 0}

    def batch_loss():
        if not phase["done"]:
            phase["drilled"] += 1
            pairs = table_drill(drill_rng, p["batch"])
            checked = phase["drilled"] % DRILL_CHECK_EVERY == 0
            phase["done"] = phase["drilled"] >= p["drill_steps"] or (
                checked and results_right(model, vocab, check_rows) >= p["drill_until"])
        else:
            pairs = draw()
        return next_token_loss(model, *encode(vocab, pairs), vocab.eos)

    loss = fit(model, batch_loss, schedule(p), curve)
    return loss, phase["drilled"]


def finetune(model: TinyLM, vocab: CharVocab, train: list[dict], priming: dict, variant: str, shows_work: bool,
             p: dict, seed: int, curve) -> float:
    """SFT on one variant: instruction -> rendering of the same program and its solution, with `replay` of each
    batch taken from the priming set, every item alike (params.yaml sft.replay; spec 20 %)."""
    rng = np.random.default_rng(seed)
    replayed, priming = int(round(p["batch"] * p["replay"])), every_item(priming)

    def batch_loss():
        pairs = []
        for i in rng.integers(0, len(train), size=p["batch"] - replayed):
            other = train[int(rng.integers(len(train)))]
            pairs.append((W.instruction(train[i]), W.render(train[i], variant, rng, other, shows_work)))
        pairs += [priming[i] for i in rng.integers(0, len(priming), size=replayed)]
        return next_token_loss(model, *encode(vocab, pairs), vocab.eos)

    return fit(model, batch_loss, schedule(p), curve)


@torch.no_grad()
def completions(model: TinyLM, vocab: CharVocab, prompts: list[str], chunk: int = 150) -> list[str]:
    """The greedy completion of each prompt, decoded (in chunks of `chunk` prompts)."""
    out = []
    for i in range(0, len(prompts), chunk):
        x = torch.tensor([vocab.encode(q, W.PROMPT_LEN) for q in prompts[i:i + chunk]])
        out += [vocab.decode(row) for row in greedy(model, x, W.RESPONSE_LEN, vocab.eos)]
    return out


def answers(model: TinyLM, vocab: CharVocab, prompts: list[str], chunk: int = 150) -> list[str | None]:
    """The answer after 'ANSWER:' of each greedy completion (None: none given)."""
    return [W.answer_of(c) for c in completions(model, vocab, prompts, chunk)]
