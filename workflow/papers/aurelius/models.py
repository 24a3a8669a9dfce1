"""The networks of the paper, trained from scratch: the TTA model (text -> log-mel), and the two evaluators of the
MSR protocol, a frame-level event detector (the PANNs stand-in, with a loudness head) and an effect classifier.
Also: how one generated log-mel becomes the detected runs the relations are judged on, and FAD-mini."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from . import relations as R
from . import sounds as S

PAD = 0
MAX_WORDS = 24
SEGMENT = 30  # frames (6 s) an effect-classifier segment is cut or padded to


def tokens(text: str, vocab: dict[str, int]) -> list[int]:
    ids = [vocab[w] for w in text.split()][:MAX_WORDS]
    return ids + [PAD] * (MAX_WORDS - len(ids))


class TTA(nn.Module):
    """Words -> a 2-layer transformer encoder; learned frame queries cross-attend to it through a 2-layer
    transformer decoder; a linear map to the 32 mel bins (normalised log-mel). A one-step deterministic generator,
    the CPU stand-in for the paper's diffusion models (spec 5.3)."""

    def __init__(self, vocab: int, d: int, layers: int, heads: int, frames: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, d, padding_idx=PAD)
        self.pos = nn.Parameter(0.02 * torch.randn(MAX_WORDS, d))
        enc = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        dec = nn.TransformerDecoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        self.queries = nn.Parameter(0.02 * torch.randn(frames, d))
        self.decoder = nn.TransformerDecoder(dec, layers)
        self.out = nn.Linear(d, S.N_MELS)

    def forward(self, words: torch.Tensor) -> torch.Tensor:
        pad = words.eq(PAD)
        memory = self.encoder(self.embed(words) + self.pos[:words.shape[1]], src_key_padding_mask=pad)
        q = self.queries.expand(len(words), -1, -1)
        return self.out(self.decoder(q, memory, memory_key_padding_mask=pad))


def fit_tta(model: TTA, words: torch.Tensor, target: torch.Tensor, epochs: int, batch: int, lr: float,
            rng: np.random.Generator, curve) -> None:
    """L1 regression to the reference (normalised) log-mel; AdamW, cosine schedule."""
    fit(model, lambda idx: F.l1_loss(model(words[idx]), target[idx]), len(words), epochs, batch, lr, rng, curve,
        "tta")


@torch.no_grad()
def generate(model: TTA, words: torch.Tensor, batch: int = 256) -> torch.Tensor:
    model.eval()
    return torch.cat([model(words[i:i + batch]) for i in range(0, len(words), batch)])


class Detector(nn.Module):
    """Dilated 1-D convolutions over mel frames; per frame and class an event logit and the event's level (dB
    relative to a clip's normalised RMS). The 64-d frame embedding, mean over frames, is FAD-mini's embedding."""

    def __init__(self, classes: int, width: int = 64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv1d(S.N_MELS, width, 5, padding=2), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=4, dilation=2), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width, 5, padding=8, dilation=4), nn.BatchNorm1d(width), nn.ReLU())
        self.event = nn.Conv1d(width, classes, 1)
        self.level = nn.Conv1d(width, classes, 1)

    def forward(self, mel: torch.Tensor):  # (B, T, mels) normalised -> (B, T, C) x2, (B, T, width)
        h = self.body(mel.transpose(1, 2))
        return self.event(h).transpose(1, 2), self.level(h).transpose(1, 2), h.transpose(1, 2)


class EffectNet(nn.Module):
    """An event's segment (SEGMENT frames, masked) -> one of sounds.EFFECTS; sees absolute levels and the length."""

    def __init__(self, width: int = 64):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1d(S.N_MELS + 1, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(width, width, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(3 * width + 1, len(S.EFFECTS))

    def forward(self, seg: torch.Tensor, mask: torch.Tensor):  # (B, SEGMENT, mels), (B, SEGMENT)
        pos = torch.linspace(-1, 1, seg.shape[1]).expand(len(seg), -1)[..., None]
        h = self.body(torch.cat([seg, pos], -1).transpose(1, 2)).transpose(1, 2)
        m = mask[..., None]
        n = m.sum(1).clamp(min=1)
        mean = (h * m).sum(1) / n
        first, last = (h * m)[:, :SEGMENT // 3].sum(1) / n, (h * m)[:, -SEGMENT // 3:].sum(1) / n
        return self.head(torch.cat([mean, first, last, n / SEGMENT], -1))


def segment(mel: np.ndarray, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Frames [start, end) of a normalised mel, cut or zero-padded to SEGMENT, and their mask."""
    x = mel[start:min(end, start + SEGMENT)]
    out, mask = np.zeros((SEGMENT, mel.shape[1]), np.float32), np.zeros(SEGMENT, np.float32)
    out[:len(x)], mask[:len(x)] = x, 1.0
    return out, mask


def fit(model: nn.Module, loss_fn, n: int, epochs: int, batch: int, lr: float, rng: np.random.Generator,
        curve, name: str) -> None:
    """AdamW over shuffled mini-batches of n examples (loss_fn(indices) -> loss), cosine schedule."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    batches = -(-n // batch)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * batches)
    model.train()
    for epoch in range(epochs):
        total = 0.0
        for idx in np.array_split(rng.permutation(n), batches):
            loss = loss_fn(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            total += loss.item() * len(idx)
        curve(f"{name}_loss", epoch, total / n)


class Evaluator:
    """The detector and the effect classifier with the mel normalisation they were trained on: from a log-mel to
    per class the detected runs at a threshold, each with its level and effect."""

    def __init__(self, weights: dict, meta: dict):
        self.mean, self.std = np.asarray(meta["mean"], np.float32), np.asarray(meta["std"], np.float32)
        self.detector = Detector(meta["classes"], meta["width"])
        self.detector.load_state_dict(weights["detector"])
        self.effects = EffectNet()
        self.effects.load_state_dict(weights["effects"])
        self.detector.eval()
        self.effects.eval()

    @classmethod
    def load(cls, path) -> "Evaluator":
        from workflow.core.io import load_state

        state = load_state(path)
        return cls(state["state_dict"], state["meta"])

    def norm(self, mel: np.ndarray) -> np.ndarray:
        return ((mel - self.mean) / self.std).astype(np.float32)

    @torch.no_grad()
    def frames(self, mels: np.ndarray, batch: int = 256):
        """(probabilities, levels, clip embeddings) of raw log-mels (N, T, mels)."""
        probs, levels, embs = [], [], []
        for i in range(0, len(mels), batch):
            logit, level, h = self.detector(torch.from_numpy(self.norm(mels[i:i + batch])))
            probs.append(torch.sigmoid(logit).numpy())
            levels.append(level.numpy())
            embs.append(h.mean(1).numpy())
        return np.concatenate(probs), np.concatenate(levels), np.concatenate(embs)

    @torch.no_grad()
    def effect(self, mel: np.ndarray, spans: list[tuple[int, int]]) -> list[str]:
        if not spans:
            return []
        segs = [segment(self.norm(mel), a, b) for a, b in spans]
        logits = self.effects(torch.from_numpy(np.stack([s[0] for s in segs])),
                              torch.from_numpy(np.stack([s[1] for s in segs])))
        return [S.EFFECTS[i] for i in logits.argmax(1).tolist()]

    def detect(self, mel: np.ndarray, prob: np.ndarray, level: np.ndarray, theta: float,
               effect_of: set[int]) -> dict[int, list[dict]]:
        """class -> runs {start, end (s), level (dB, the run's median), effect (classes in effect_of only)}."""
        out = {}
        for c in np.flatnonzero((prob >= theta).sum(0) >= R.MIN_RUN_S * S.FPS):
            spans = R.runs(prob[:, c], theta)
            if not spans:
                continue
            effects = self.effect(mel, spans) if c in effect_of else [None] * len(spans)
            out[int(c)] = [{"start": a / S.FPS, "end": b / S.FPS, "level": float(np.median(level[a:b, c])),
                            "effect": e} for (a, b), e in zip(spans, effects)]
        return out


def score(evaluator: Evaluator, mels: np.ndarray, pairs: list[dict]) -> tuple[list[dict], np.ndarray]:
    """Per pair the MSR components averaged over the thresholds, and the clip embeddings (for FAD-mini)."""
    prob, level, emb = evaluator.frames(mels)
    rows = []
    for i, pair in enumerate(pairs):
        per = [R.msr(pair, evaluator.detect(mels[i], prob[i], level[i], th, {pair["classes"][0]}))
               for th in R.THRESHOLDS]
        rows.append({k: float(np.mean([p[k] for p in per])) for k in per[0]})
    return rows, emb


def frechet(a: np.ndarray, b: np.ndarray) -> float:
    """Frechet distance between Gaussians fitted to two embedding sets (FAD's formula)."""
    from scipy import linalg

    mu1, mu2 = a.mean(0), b.mean(0)
    s1, s2 = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    covmean = linalg.sqrtm(s1 @ s2)
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1 + s2 - 2 * np.real(covmean)))
