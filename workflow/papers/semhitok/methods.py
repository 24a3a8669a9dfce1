"""SemHiTok's tokenizer, its baselines, the frozen networks around them and the metrics (spec 1.3).

- Teacher (the SigLIP stand-in): a small CNN whose 4x4x32 feature map is trained to predict the class, with the
  nuisances re-drawn every epoch, so its features are invariant to colour and texture. Frozen afterwards.
- Evaluator: an independent, wider CNN trained on the class and the nuisance bins; its pooled features give rFD
  (the FID analogue). Never used for training.
- Stage 1 (SemanticVQ): 1x1 convs from the teacher's features to a cosine codebook of K codes (EMA, dead-code
  restart), decoded back to the teacher's features; frozen, it gives each patch its semantic code k.
- Stage 2 and the baselines (Tokenizer): one pixel encoder and decoder shape for all; what differs is the kind:
    sghc     pixel codes from the sub-codebook of the patch's semantic code (K sub-codebooks of m codes)
    flat     one shared m-code pixel codebook beside the semantic code (B4: same bits, no hierarchy)
    pixel    one flat codebook of K*m pixel codes of the spec's width d_p = 8, no semantics (B1)
    widepixel  B1 with 16-d codes, as wide as SGHC's decoder input (a sensitivity row, not judged)
    semonly  the semantic code alone, a decoder trained on it (B2)
    joint    one flat K*m codebook of 8-d codes trained with the pixel loss + lambda * a teacher-feature head (B3,
             VILA-U-like)
    random   SGHC routed by a random sub-codebook per patch instead of the semantic code (negative control)
    coupled  SGHC trained in one stage (K3's control and placebo): its own semantic codebook, fresh, learned with
             the pixel sub-codebooks (the stage-1 loss added to the pixel loss, the pixel loss reaching the semantic
             encoder through the straight-through codes) instead of stage 1's frozen one: only the decoupling inert
- Probe (the LLaVA stand-in): the frozen tokenizer's codebook features of its 16 tokens (the paper's MLLM reads the
  semantic and pixel code vectors concatenated along the channels, not the ids), a linear adapter, one transformer
  layer (2 heads), mean pool, heads for the class and two yes/no questions; the continuous teacher features give
  the upper bound. The spec's probe on the token ids through a fresh embedding table is kept beside it (probe_ids).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workflow.lib.vq import VectorQuantizer, decoder, encoder, grid_rows, rows_grid

from .plan import KINDS  # the tokenizer kinds, named once where the plan (no torch) needs them too
FEAT = 32   # teacher feature width (spec)
D_SEM = 16  # semantic code width (spec)
D_PIX = 8   # the pixel code width of SGHC and of B1, B3, B4 (spec); SGHC's decoder sees [projected semantic code ;
            # pixel code] = 16
D_WIDE = 16  # the widened B1 (sensitivity row): its decoder input as wide as SGHC's


class Teacher(nn.Module):
    def __init__(self, n_classes: int):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.GELU(),
                                  nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.GELU(),
                                  nn.Conv2d(32, FEAT, 3, stride=2, padding=1))
        self.heads = nn.ModuleList([nn.Linear(FEAT, n_classes)])

    def features(self, x):
        return self.body(x)

    def forward(self, x):
        return [h(self.features(x).mean((2, 3))) for h in self.heads]


class Evaluator(nn.Module):
    """Wider, with a pooled 64-d embedding (rFD's feature space) and one head per attribute."""

    def __init__(self, sizes: list[int]):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 24, 3, padding=1), nn.GELU(), nn.Conv2d(24, 24, 3, padding=1),
                                  nn.GELU(), nn.Conv2d(24, 48, 3, stride=2, padding=1), nn.GELU(),
                                  nn.Conv2d(48, 48, 3, stride=2, padding=1), nn.GELU())
        self.embed = nn.Linear(48, 64)
        self.heads = nn.ModuleList([nn.Linear(64, n) for n in sizes])

    def features(self, x):
        return self.embed(self.body(x).mean((2, 3)))

    def forward(self, x):
        f = F.gelu(self.features(x))
        return [h(f) for h in self.heads]


def batches(n: int, batch: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for i in range(0, n, batch):
        yield torch.from_numpy(order[i:i + batch])


def fit_epochs(parameters, n: int, p: dict, rng: np.random.Generator, batch_loss, curve, name: str = "loss",
               each_epoch=None) -> None:
    """The training loop of every network here: Adam (p: lr) over p["epochs"] epochs of shuffled batches of the n
    examples; batch_loss(idx) gives a batch's loss; each_epoch(epoch), if given, runs as an epoch starts (the
    teacher's re-rendering); curve(name, epoch, mean loss) after each epoch."""
    opt = torch.optim.Adam(parameters, lr=p["lr"])
    for epoch in range(p["epochs"]):
        if each_epoch is not None:
            each_epoch(epoch)
        total = 0.0
        for idx in batches(n, p["batch"], rng):
            loss = batch_loss(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        curve(name, epoch, total / n)


def fit_classifier(net: nn.Module, images, targets: np.ndarray, p: dict, rng: np.random.Generator, curve) -> None:
    """Cross-entropy on every head; `images(epoch)` gives the epoch's images (re-rendered for the teacher)."""
    t = torch.from_numpy(targets)
    epoch_images = {}

    def batch_loss(idx):
        return sum(F.cross_entropy(out, t[idx, i]) for i, out in enumerate(net(epoch_images["x"][idx])))

    fit_epochs(net.parameters(), len(t), p, rng, batch_loss, curve,
               each_epoch=lambda epoch: epoch_images.update(x=torch.from_numpy(images(epoch))))


@torch.no_grad()
def accuracy(net: nn.Module, x: np.ndarray, targets: np.ndarray) -> list[float]:
    outs = net(torch.from_numpy(x))
    return [float((o.argmax(1).numpy() == targets[:, i]).mean()) for i, o in enumerate(outs)]


class SemanticVQ(nn.Module):
    """Stage 1: teacher features -> K cosine codes -> teacher features."""

    def __init__(self, n_codes: int, restart_every: int):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(FEAT, 32, 1), nn.GELU(), nn.Conv2d(32, D_SEM, 1))
        self.vq = VectorQuantizer(n_codes, D_SEM, cosine=True, restart_every=restart_every)
        self.dec = nn.Sequential(nn.Conv2d(D_SEM, 32, 1), nn.GELU(), nn.Conv2d(32, FEAT, 1))

    def forward(self, feat):
        b, _, h, w = feat.shape
        q, idx, commit = self.vq(grid_rows(self.enc(feat)))
        return self.dec(rows_grid(q, b, h, w)), idx.reshape(b, h * w), commit


def feature_loss(pred, target):
    """1 - cos + L1 between predicted and teacher feature maps (per position)."""
    return (1 - F.cosine_similarity(pred, target, dim=1)).mean() + F.l1_loss(pred, target)


def fit_semantic(sem: SemanticVQ, teacher: Teacher, x: np.ndarray, p: dict, rng, curve) -> None:
    with torch.no_grad():
        feats = teacher.features(torch.from_numpy(x))

    def batch_loss(idx):
        rec, _, commit = sem(feats[idx])
        return feature_loss(rec, feats[idx]) + commit

    fit_epochs(sem.parameters(), len(x), p, rng, batch_loss, curve, "stage1_loss")


class Tokenizer(nn.Module):
    def __init__(self, kind: str, n_sem: int, m: int, sem: SemanticVQ, teacher: Teacher, restart_every: int,
                 lam: float = 0.0):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"unknown tokenizer kind {kind!r}; kinds: {', '.join(KINDS)}")
        self.kind, self.n_sem, self.m, self.lam = kind, n_sem, m, lam
        self.sem, self.teacher = sem, teacher  # frozen: not in the optimiser, never in train mode
        for frozen in (sem, teacher):
            frozen.requires_grad_(False)
        if kind == "coupled":  # its own semantic codebook, trained with the rest (not stage 1's)
            self.sem = SemanticVQ(n_sem, restart_every)
        routed = kind in ("sghc", "flat", "random", "coupled")
        pixel_dim = {"semonly": 0, "widepixel": D_WIDE}.get(kind, D_PIX)
        self.enc = encoder(3, pixel_dim) if pixel_dim else None
        if kind in ("sghc", "random", "coupled"):
            self.vq = VectorQuantizer(n_sem * m, D_PIX, groups=n_sem, restart_every=restart_every)
        elif kind == "flat":
            self.vq = VectorQuantizer(m, D_PIX, restart_every=restart_every)
        else:
            self.vq = VectorQuantizer(n_sem * m, pixel_dim, restart_every=restart_every) if pixel_dim else None
        self.proj = nn.Linear(D_SEM, 16 - D_PIX if routed else 16) if kind in ("sghc", "flat", "random", "semonly",
                                                                             "coupled") else None
        code_dim = 16 if self.proj is not None else pixel_dim  # the decoder's input: the code the patch gets
        self.dec = decoder(code_dim, 3)
        self.head = (nn.Sequential(nn.Conv2d(code_dim, 32, 1), nn.GELU(), nn.Conv2d(32, FEAT, 1)) if kind == "joint"
                     else None)

    @property
    def vocab(self) -> int:
        return self.n_sem if self.kind == "semonly" else self.n_sem * self.m

    def train(self, mode: bool = True):
        super().train(mode)
        if self.kind != "coupled":  # the coupled placebo trains its semantic codebook
            self.sem.eval()
        self.teacher.eval()
        return self

    def semantic_codes(self, x, feats=None):
        """Each patch's semantic code, from the frozen teacher's features of images x (`feats`, when given)."""
        with torch.no_grad():
            _, k, _ = self.sem(self.teacher.features(x) if feats is None else feats)
        return k.reshape(-1)

    def forward(self, x, route=None, feats=None):
        """(reconstruction, token ids (b, 16), auxiliary loss, codebook features (b, 16, d)). The codebook
        features are the code vectors each token id names, semantic then pixel (what the understanding probe reads;
        for the random control the semantic code its id names is its random route, so its tokens no longer carry
        the patch's semantic code). `route`: the random control's sub-codebook per patch (rows of the batch's
        patches); every other kind routes by the semantic code. `feats`: the teacher's features of x when the
        caller has them (training reuses them as the loss's target)."""
        b = x.shape[0]
        aux = torch.zeros(())
        if feats is None:
            with torch.no_grad():
                feats = self.teacher.features(x)
        parts, codebook = [], []
        if self.kind == "coupled":  # stage 1's loss in the same step, the pixel loss reaching the semantic encoder
            h, w = feats.shape[2:]  # through the straight-through semantic codes (equal to codes[k] in value)
            q_sem, k, commit = self.sem.vq(grid_rows(self.sem.enc(feats)))
            aux = aux + feature_loss(self.sem.dec(rows_grid(q_sem, b, h, w)), feats) + commit
        else:
            k = self.semantic_codes(x, feats)
            q_sem = self.sem.vq.codes[k]
        if self.proj is not None:
            parts.append(self.proj(q_sem))
            codebook.append(self.sem.vq.codes[route] if self.kind == "random" else q_sem)
        if self.enc is not None:
            z = self.enc(x)
            group = route if self.kind == "random" else k if self.kind in ("sghc", "coupled") else None
            q, j, commit = self.vq(grid_rows(z), group)
            aux = aux + commit  # (the coupled placebo's semantic loss kept)
            parts.append(q)
            codebook.append(q)
        rows = torch.cat(parts, 1)
        code = rows_grid(rows, b, 4, 4)
        if self.kind in ("sghc", "random", "coupled"):
            tokens = j                       # k * m + (index inside the sub-codebook): the unified id
        elif self.kind == "flat":
            tokens = k * self.m + j
        elif self.kind == "semonly":
            tokens = k
        else:
            tokens = j
        if self.head is not None:
            aux = aux + self.lam * feature_loss(self.head(code), feats)
        return self.dec(code), tokens.reshape(b, 16), aux, torch.cat(codebook, 1).reshape(b, 16, -1)


def pixel_loss(teacher: Teacher, rec, x, target, perceptual: float):
    """L1 + MSE + perceptual * the squared distance in the frozen teacher's feature space (no GAN), relative to the
    features' mean square: raw, the teacher's features (std ~8) made that term 100x the pixel terms (measured: every
    tokenizer fell below the data set's mean image, 13.8 vs 15.0 dB). `target`: the teacher's features of x."""
    relative = F.mse_loss(teacher.features(rec), target) / target.pow(2).mean()
    return F.l1_loss(rec, x) + F.mse_loss(rec, x) + perceptual * relative


def fit_tokenizer(tok: Tokenizer, x: np.ndarray, route: np.ndarray | None, p: dict, rng, curve) -> None:
    xt = torch.from_numpy(x)
    rt = None if route is None else torch.from_numpy(route)

    def batch_loss(idx):
        x = xt[idx]
        with torch.no_grad():  # once a batch: the semantic codes, the joint head's target and the loss's target
            feats = tok.teacher.features(x)
        rec, _, aux, _ = tok(x, None if rt is None else rt[idx].reshape(-1), feats)
        return pixel_loss(tok.teacher, rec, x, feats, p["perceptual"]) + aux

    tok.train()
    fit_epochs([q for q in tok.parameters() if q.requires_grad], len(x), p, rng, batch_loss, curve)
    tok.eval()


@torch.no_grad()
def encode_all(tok: Tokenizer, x: np.ndarray, route: np.ndarray | None, chunk: int = 512):
    """(reconstructions, token ids, codebook features) of every image."""
    out = []
    for i in range(0, len(x), chunk):
        r = None if route is None else torch.from_numpy(route[i:i + chunk]).reshape(-1)
        rec, t, _, codes = tok(torch.from_numpy(x[i:i + chunk]), r)
        out.append((rec.numpy(), t.numpy(), codes.numpy()))
    return tuple(np.concatenate(part) for part in zip(*out))


class Probe(nn.Module):
    """Token ids (b, 16) through an embedding table, or features (b, 16, d) through a linear adapter (codebook
    features, or the teacher's continuous ones) -> one head per question."""

    def __init__(self, vocab: int | None, feat_dim: int | None, sizes: list[int], d: int = 32):
        super().__init__()
        self.embed = nn.Embedding(vocab, d) if vocab else nn.Linear(feat_dim, d)
        self.pos = nn.Parameter(torch.randn(16, d) * 0.02)
        self.block = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.heads = nn.ModuleList([nn.Linear(d, n) for n in sizes])

    def forward(self, tokens):
        h = self.block(self.embed(tokens) + self.pos).mean(1)
        return [head(h) for head in self.heads]


def probe_accuracy(inputs: dict, targets: dict, vocab: int | None, p: dict, rng) -> tuple[float, list[float]]:
    """Mean test accuracy over the questions at the epoch with the best validation accuracy (and per question)."""
    sizes = [int(targets["train"][:, i].max()) + 1 for i in range(targets["train"].shape[1])]
    feat_dim = None if vocab else inputs["train"].shape[-1]
    probe = Probe(vocab, feat_dim, sizes)
    to_t = (lambda a: torch.from_numpy(a).long()) if vocab else torch.from_numpy
    x = {s: to_t(a) for s, a in inputs.items()}
    t = {s: torch.from_numpy(a) for s, a in targets.items()}
    opt = torch.optim.Adam(probe.parameters(), lr=p["probe_lr"])
    best = (-1.0, 0.0, [])
    for _ in range(p["probe_epochs"]):
        probe.train()
        for idx in batches(len(t["train"]), p["probe_batch"], rng):
            loss = sum(F.cross_entropy(o, t["train"][idx, i]) for i, o in enumerate(probe(x["train"][idx])))
            opt.zero_grad()
            loss.backward()
            opt.step()
        probe.eval()
        with torch.no_grad():
            val = np.mean([float((o.argmax(1) == t["val"][:, i]).float().mean())
                           for i, o in enumerate(probe(x["val"]))])
            test = [float((o.argmax(1) == t["test"][:, i]).float().mean()) for i, o in enumerate(probe(x["test"]))]
        if val > best[0]:
            best = (val, float(np.mean(test)), test)
    return best[1], best[2]


def psnr_ssim(x: np.ndarray, rec: np.ndarray) -> tuple[float, float]:
    """Mean per-image PSNR (dB) and SSIM (skimage.metrics, data range 1, channels first)."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    psnr = [peak_signal_noise_ratio(a, b, data_range=1.0) for a, b in zip(x, rec)]
    ssim = [structural_similarity(a, b, data_range=1.0, channel_axis=0) for a, b in zip(x, rec)]
    return float(np.mean(psnr)), float(np.mean(ssim))


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """||mu_a - mu_b||^2 + tr(S_a + S_b - 2 (S_a S_b)^1/2) of two feature samples (rows), as FID."""
    from scipy import linalg

    mu_a, mu_b = a.mean(0), b.mean(0)
    sa, sb = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root = linalg.sqrtm(sa @ sb)
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(sa + sb - 2 * np.real(root)))


@torch.no_grad()
def rfd(evaluator: Evaluator, x: np.ndarray, rec: np.ndarray) -> float:
    return frechet_distance(evaluator.features(torch.from_numpy(x)).numpy(),
                            evaluator.features(torch.from_numpy(rec.astype(np.float32))).numpy())


def patches(x: np.ndarray) -> np.ndarray:
    """(n, 3, 16, 16) -> (n * 16, 48): the 4x4-pixel patches of the token grid, row-major like the tokens."""
    n = len(x)
    return x.reshape(n, 3, 4, 4, 4, 4).transpose(0, 2, 4, 1, 3, 5).reshape(n * 16, 48)


def coupling(x: np.ndarray, codes: np.ndarray) -> float:
    """rho_sem = E_k[Var(patch pixels | k)] / Var(patch pixels) (total variance; < 1: codes explain pixels)."""
    pix, k = patches(x), codes.reshape(-1)
    total = pix.var(0).sum()
    within = sum((k == c).sum() * pix[k == c].var(0).sum() for c in np.unique(k)) / len(k)
    return float(within / total)
