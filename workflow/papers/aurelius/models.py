"""The networks of the paper, trained from scratch: the TTA model (text -> log-mel), and the two evaluators of the
MSR protocol, a frame-level event detector (the PANNs stand-in, with a loudness head) and an effect classifier.
Also: how one generated log-mel becomes the detected runs the relations are judged on, and FAD-mini."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workflow.lib import flow

from . import relations as R
from . import sounds as S

PAD = 0
MAX_WORDS = 24
SEGMENT = 6 * S.FPS  # frames (6 s) an effect-classifier segment is cut or padded to


def tokens(text: str, vocab: dict[str, int]) -> list[int]:
    ids = [vocab[w] for w in text.split()][:MAX_WORDS]
    return ids + [PAD] * (MAX_WORDS - len(ids))


def time_embedding(t: torch.Tensor, d: int) -> torch.Tensor:
    """Sinusoidal features of the flow time t in [0, 1] (B,) -> (B, d)."""
    freqs = torch.exp(-torch.arange(d // 2) * (np.log(1000.0) / (d // 2)))
    angles = 1000.0 * t[:, None] * freqs
    return torch.cat([angles.sin(), angles.cos()], -1)


class PatchPCA:
    """The generator's latent space: each patch of `patch` frames of the normalised log-mel projected on the first
    `latent` principal components of the training audio's patches, whitened (a linear autoencoder, where the paper's
    models generate in a VAE's latent: a 64-d token can carry a 64-d latent patch whole, not a 256-value patch).
    Fitted once on the pairs' audio and shared by every run, like the normalisation."""

    def __init__(self, mean: np.ndarray, basis: np.ndarray, scale: np.ndarray, patch: int):
        self.mean, self.basis, self.scale, self.patch = mean, basis, scale, patch

    @classmethod
    def fit(cls, mels: np.ndarray, patch: int, latent: int) -> "PatchPCA":
        x = cls._patches(mels, patch)
        mean = x.mean(0)
        eigenvalues, vectors = np.linalg.eigh(np.cov(x - mean, rowvar=False))
        top = np.argsort(eigenvalues)[::-1][:latent]
        return cls(mean, vectors[:, top], np.sqrt(np.maximum(eigenvalues[top], 1e-8)), patch)

    @staticmethod
    def _patches(mels: np.ndarray, patch: int) -> np.ndarray:
        n, frames, bands = mels.shape
        return mels.reshape(n * frames // patch, patch * bands)

    def encode(self, mels: np.ndarray) -> np.ndarray:
        """(N, frames, bands) -> (N, frames / patch, latent), unit variance per component."""
        z = (self._patches(mels, self.patch) - self.mean) @ self.basis / self.scale
        return z.reshape(len(mels), -1, len(self.scale)).astype(np.float32)

    def decode(self, z: np.ndarray) -> np.ndarray:
        n, tokens, _ = z.shape
        x = (z.reshape(n * tokens, -1) * self.scale) @ self.basis.T + self.mean
        return x.reshape(n, tokens * self.patch, -1).astype(np.float32)


class TTA(nn.Module):
    """A caption -> log-mel flow model (the paper's TTA models are diffusion and flow models; TangoFlux a rectified
    flow over a VAE's latent): the velocity of a noisy latent log-mel (PatchPCA tokens) at flow time t, given the
    caption, from its predicted clean latent. Words -> a transformer encoder (the text encoder); the latent tokens,
    with their position and the time embedding; a transformer decoder (self-attention over the tokens,
    cross-attention to the words) -> each clean token. The token NULL (vocab's last id) is the empty caption of
    classifier-free guidance."""

    def __init__(self, vocab: int, d: int, layers: int, heads: int, tokens: int, latent: int):
        super().__init__()
        self.null, self.d = vocab - 1, d
        self.embed = nn.Embedding(vocab, d, padding_idx=PAD)
        self.pos = nn.Parameter(0.02 * torch.randn(MAX_WORDS, d))
        enc = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        dec = nn.TransformerDecoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc, layers, enable_nested_tensor=False)
        self.inp = nn.Linear(latent, d)
        self.token_pos = nn.Parameter(0.02 * torch.randn(tokens, d))
        self.time = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.decoder = nn.TransformerDecoder(dec, layers)
        self.out = nn.Linear(d, latent)

    def encode(self, words: torch.Tensor):
        pad = words.eq(PAD)
        return self.encoder(self.embed(words) + self.pos[:words.shape[1]], src_key_padding_mask=pad), pad

    def denoise(self, x: torch.Tensor, t: torch.Tensor, memory: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """The clean latent predicted from x_t, preconditioned (flow.preconditioned)."""
        h = self.inp(x) + self.token_pos + self.time(time_embedding(t, self.d))[:, None]
        return flow.preconditioned(self.out(self.decoder(h, memory, memory_key_padding_mask=pad)), x, t)

    def velocity(self, x: torch.Tensor, t: torch.Tensor, memory: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        return flow.from_data(lambda x, t: self.denoise(x, t, memory, pad))(x, t)

    def forward(self, x: torch.Tensor, t: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
        return self.velocity(x, t, *self.encode(words))

    def empty(self, n: int) -> torch.Tensor:
        """n empty captions (NULL then padding)."""
        words = torch.full((n, MAX_WORDS), PAD, dtype=torch.long)
        words[:, 0] = self.null
        return words


def fit_tta(model: TTA, words: torch.Tensor, target: torch.Tensor, epochs: int, batch: int, lr: float,
            drop: float, rng: np.random.Generator, curve) -> None:
    """Rectified flow on the latent log-mels; a caption replaced by the empty one with probability `drop`
    (classifier-free guidance's unconditional model); AdamW, cosine schedule."""
    g = torch.Generator().manual_seed(int(rng.integers(2 ** 31)))

    def loss(idx):
        w = words[idx].clone()
        w[torch.from_numpy(rng.random(len(idx)) < drop)] = model.empty(1)
        return flow.flow_matching_loss(lambda x, t: model(x, t, w), target[idx], g)

    fit(model, loss, len(words), epochs, batch, lr, rng, curve, "tta")


@torch.no_grad()
def generate(model: TTA, words: torch.Tensor, steps: int, guidance: float, seed: int,
             batch: int = 200) -> torch.Tensor:
    """One latent sample per caption: Euler steps from seeded noise, with classifier-free guidance."""
    model.eval()
    g = torch.Generator().manual_seed(seed)
    shape = tuple(model.token_pos.shape[:1]) + (model.out.out_features,)
    out = []
    for i in range(0, len(words), batch):
        w = words[i:i + batch]
        cond, empty = model.encode(w), model.encode(model.empty(len(w)))
        v = flow.guided(lambda x, t: model.velocity(x, t, *cond), lambda x, t: model.velocity(x, t, *empty), guidance)
        out.append(flow.euler_sample(v, torch.randn((len(w),) + shape, generator=g), steps))
    return torch.cat(out)


class Detector(nn.Module):
    """PANNs' shape in miniature: 2-D convolution blocks over (frames, mel bands), each halving the bands (the first
    also the frames), the remaining bands stacked into channels, dilated 1-D convolutions over frames, and per frame
    and class an event logit and the event's level (dB relative to a clip's normalised RMS), interpolated back to the
    input's frames (PANNs' framewise output). The frame embedding, mean over frames, is FAD-mini's embedding."""

    def __init__(self, classes: int, width: int = 128, channels: tuple[int, ...] = (16, 16, 32), band_stride: int = 2):
        super().__init__()
        # the first block strides 2 over frames and band_stride over bands (PANNs pools 2 x 2 after its first block;
        # band_stride 1 keeps every band for the next block, where two events that start together differ)
        blocks = [nn.Conv2d(1, channels[0], 3, stride=(2, band_stride), padding=1), nn.BatchNorm2d(channels[0]),
                  nn.ReLU()]
        c_in = channels[0]
        for c in channels[1:]:
            blocks += [nn.Conv2d(c_in, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.AvgPool2d((1, 2))]
            c_in = c
        self.blocks = nn.Sequential(*blocks)
        bands = S.N_MELS // band_stride >> (len(channels) - 1)
        self.temporal = nn.Sequential(
            nn.Conv1d(c_in * bands, width, 1), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=2, dilation=2), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=4, dilation=4), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width, 3, padding=8, dilation=8), nn.BatchNorm1d(width), nn.ReLU())  # +-1.5 s of context
        self.event = nn.Conv1d(width, classes, 1)
        self.level = nn.Conv1d(width, classes, 1)

    def forward(self, mel: torch.Tensor):  # (B, T, mels) normalised -> (B, T, C) x2, (B, T/2, width)
        h = self.blocks(mel[:, None])  # (B, channels, T/2, bands)
        h = self.temporal(h.permute(0, 1, 3, 2).flatten(1, 2))  # (B, width, T/2)

        def frames(z):
            return F.interpolate(z, size=mel.shape[1], mode="linear", align_corners=False).transpose(1, 2)

        return frames(self.event(h)), frames(self.level(h)), h.transpose(1, 2)


class EffectNet(nn.Module):
    """An event's segment (SEGMENT frames, masked) -> one of sounds.EFFECTS; sees absolute levels and the length."""

    def __init__(self, width: int = 64):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1d(S.N_MELS + 1, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(width, width, 3, padding=2, dilation=2), nn.ReLU())
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
        self.detector = Detector(meta["classes"], meta["width"], tuple(meta["channels"]),
                                 meta.get("band_stride", 2))  # 2: an evaluator saved before the knob
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
        """class -> runs {start, end (s), level (dB: relation.loudness of its frames), effect (classes in effect_of
        only)}."""
        out = {}
        for c in np.flatnonzero((prob >= theta).sum(0) >= R.MIN_RUN_S * S.FPS):
            spans = R.runs(prob[:, c], theta)
            if not spans:
                continue
            effects = self.effect(mel, spans) if c in effect_of else [None] * len(spans)
            out[int(c)] = [{"start": a / S.FPS, "end": b / S.FPS, "level": R.loudness(level[a:b, c]),
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
