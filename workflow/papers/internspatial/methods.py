"""The small vision-language model and its three training regimes (spec 6.3), with the negative controls.

History (2026-12-05): a VLM trained from scratch, its CNN included, stayed at the answer priors: it did not bind a
question to an object (attribute QA 0.17-0.19 after 8-30 epochs), and its CNN named a lone object's shape at 0.40
(chance 0.20). The paper's models start from a pretrained InternVL2.5 whose vision encoder knows objects before any
spatial QA; the miniature does the same since issue 35 (2026-12-07): an Encoder per seed is pretrained on the
renderer's own labels (cell_targets: which object covers each patch, its colour, shape, canonical position, height
and volume; not its facing) and then frozen and shared by every regime and control of the seed, its features of the
raw images computed once (spec 6.6: "caches the CNN features of un-overlaid images"); an overlaid image is encoded
when it is read.

Model: the encoder (a CNN, 48 px -> 6 x 6 x 64 patch tokens per view), an MLP projector (trained, as InternVL's),
a view embedding, a word tokenizer for the question (box coordinates are tokens n0-n47), a 2-layer transformer
(d = 64, 4 heads) over [CLS, a max-pooled summary token per view, image tokens, text tokens], and a classifier over
the fixed answer set on CLS; an answer is chosen among its item's candidates (choose: multiple choice).

Regimes, the same model and optimiser, trained on:
    m0            general (attribute) QA only, natural language on raw images (the base model)
    m1            general (half) + the spatial QA (single- and two-view), natural language on raw images
    m2            the same items, each single-view spatial item in a format drawn uniformly from the 19
Controls:
    m2_shuffled   as m2, the spatial answers permuted among the items of each category (spatial labels broken)
    m2_wrongcue   as m2, the box and mark cues (text and image) pointing at another visible object
    m2_nogeneral  as m2 without the general QA
    m2_shuffledgeneral  as m2, the general answers permuted among the kept general items of each question type
                  (colour, shape): the placebo of K4, the retention data made inert, its items and priors kept
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from . import qa
from . import world as W

REGIMES = ("m0", "m1", "m2", "m2_shuffled", "m2_wrongcue", "m2_nogeneral", "m2_shuffledgeneral")
SPECIAL = ("<pad>", "<unk>", "<ref>", "</ref>", "<box>", "</box>", "?", ",", "mark1", "mark2", "mark3")
MAX_TOKENS = 32
GRID = 6            # the encoder's output grid (6 x 6 patch tokens per view, spec)
MIN_CELL = 4        # pixels of an object in an 8 x 8 cell for the cell to be labelled with it
# the regression targets of an object cell: canonical x (m, right), depth y (m), height (m), log volume (log m^3),
# divided by these scales so that each is of order one
REG_SCALE = np.array([2.0, 5.0, 1.0, 2.0], np.float32)
COLOURS, SHAPES = tuple(W.COLOURS), W.SHAPES


def vocabulary(items: list[dict], names: list[list[str]]) -> dict[str, int]:
    words = set(SPECIAL) | {f"n{i}" for i in range(48)}
    for it in items:
        words |= set(it["question"].replace("{A}", "").replace("{B}", "").replace("{C}", "").split())
    for scene_names in names:
        for name in scene_names:
            words |= set(name.split())
    words |= {"the", "object", "region"}
    return {w: i for i, w in enumerate(["<pad>"] + sorted(words - {"<pad>"}))}  # <pad> is 0


def tokens(text: str, vocab: dict[str, int]) -> list[int]:
    ids = [vocab.get(w, vocab["<unk>"]) for w in text.split()][:MAX_TOKENS]
    return ids + [0] * (MAX_TOKENS - len(ids))


# ---- the vision encoder, pretrained on the renderer's labels (the paper's VLM starts from a pretrained InternVL) ----

def object_labels(scene: dict, view: int) -> list[tuple[int, int, np.ndarray]]:
    """(colour index, shape index, scaled regression targets) of each object of a scene record, in one view."""
    out = []
    for name, ann, size in zip(scene["names"], scene["anns"][view], scene["sizes"]):
        colour, shape = name.split()
        reg = np.array([ann["xyz"][0], ann["xyz"][1], *size], np.float32) / REG_SCALE
        out.append((COLOURS.index(colour), SHAPES.index(shape), reg))
    return out


def cell_targets(ids: np.ndarray, labels: list[tuple[int, int, np.ndarray]], grid: int = GRID):
    """Per cell of a grid x grid partition of the instance-id image: the object with the most pixels there (at least
    MIN_CELL) -> its colour and shape classes, its regression targets, and the mask of object cells (elsewhere the
    targets are 0 and unused). The encoder's pretraining targets: what is where, and how far, tall and big it is."""
    cell = ids.shape[0] // grid
    blocks = ids[:grid * cell, :grid * cell].reshape(grid, cell, grid, cell).transpose(0, 2, 1, 3)
    blocks = blocks.reshape(grid, grid, -1)  # (row, column, the cell's pixels)
    colour, shape = np.zeros((grid, grid), np.int64), np.zeros((grid, grid), np.int64)
    reg = np.zeros((grid, grid, len(REG_SCALE)), np.float32)
    mask = np.zeros((grid, grid), bool)
    for r in range(grid):
        for c in range(grid):
            counts = np.bincount(blocks[r, c], minlength=len(labels) + 1)[1:]
            if len(counts) and counts.max() >= MIN_CELL:
                k = int(counts.argmax())
                colour[r, c], shape[r, c], reg[r, c], mask[r, c] = labels[k][0], labels[k][1], labels[k][2], True
    return colour, shape, reg, mask


class Encoder(nn.Module):
    """The CNN (48 px -> GRID x GRID x width) and, for its pretraining only, a linear read-out per cell (an object
    there or not; its colour, shape and regression targets): a linear probe of what each patch token says."""

    def __init__(self, width: int = 64, depth: int = 0):
        super().__init__()
        # a stride-1 first layer and a max-pooled grid: with three stride-2 layers a 70-pixel object's colour was
        # not learnt (test accuracy at chance, measured), with these it is learnt within two epochs
        # then `depth` stride-1 layers at 12 x 12: a receptive field of 13 pixels did not take in an object's
        # silhouette (shape read at 0.35 on validation cells, colour at 0.96), each layer widens it by 8
        layers = [nn.Conv2d(3, 32, 3, padding=1), nn.GELU(), nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.GELU(),
                  nn.Conv2d(64, width, 3, stride=2, padding=1), nn.GELU()]
        for _ in range(depth):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.GELU()]
        self.cnn = nn.Sequential(*layers, nn.MaxPool2d(2))
        self.readout = nn.Conv2d(width, 1 + len(COLOURS) + len(SHAPES) + len(REG_SCALE), 1)
        self.width = width

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """images (n, 3, 48, 48) in [0, 1] -> patch features (n, GRID * GRID, width)."""
        return self.cnn(images).flatten(2).transpose(1, 2)

    def read(self, images: torch.Tensor):
        """-> (objectness logit, colour logits, shape logits, regression), each (n, GRID, GRID, ...)."""
        out = self.readout(self.cnn(images)).permute(0, 2, 3, 1)  # (n, GRID, GRID, channels)
        return torch.split(out, [1, len(COLOURS), len(SHAPES), len(REG_SCALE)], -1)


def as_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 images (n, 48, 48, 3) -> float (n, 3, 48, 48) in [0, 1]."""
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2))).float() / 255.0


def encoder_targets(ids: np.ndarray, scenes: list[dict], index: list[int]):
    """Stacked cell targets of the images at `index` (qa.VIEWS images per scene, scene after scene)."""
    parts = [cell_targets(ids[k], object_labels(scenes[k // qa.VIEWS], k % qa.VIEWS)) for k in index]
    return [torch.from_numpy(np.stack([p[j] for p in parts])) for j in range(4)]


def encoder_loss(encoder: Encoder, images: torch.Tensor, targets) -> torch.Tensor:
    """Objectness on every cell; colour, shape and the regression on the object cells only (a cell is mostly empty:
    with 'none' as one more class the read-out learnt to say 'none' everywhere, colour 0.19 on object cells)."""
    colour, shape, reg, mask = targets
    o_logit, c_logits, s_logits, r_pred = encoder.read(images)
    loss = F.binary_cross_entropy_with_logits(o_logit[..., 0], mask.float())
    if mask.any():
        loss = loss + F.cross_entropy(c_logits[mask], colour[mask]) + F.cross_entropy(s_logits[mask], shape[mask])
        loss = loss + F.mse_loss(r_pred[mask], reg[mask])
    return loss


def pretrain(encoder: Encoder, images: np.ndarray, ids: np.ndarray, scenes: list[dict], index: list[int], p: dict,
             rng: np.random.Generator, curve) -> None:
    """The cell targets of the images at `index`, optimised by `optimise`."""
    targets = encoder_targets(ids, scenes, index)
    x = as_tensor(images[index])

    def epoch_batches():
        order = torch.from_numpy(rng.permutation(len(index)))
        for j in range(0, len(index), p["batch"]):
            b = order[j:j + p["batch"]]
            yield encoder_loss(encoder, x[b], [t[b] for t in targets]), len(b)

    optimise(encoder, epoch_batches, -(-len(index) // p["batch"]), p, curve)


@torch.no_grad()
def probe(encoder: Encoder, images: np.ndarray, ids: np.ndarray, scenes: list[dict], index: list[int]) -> dict:
    """Legibility: the read-out on held-out images: whether a cell holds an object (accuracy), and on the cells an
    object covers its colour and shape (accuracy) and depth (mean absolute error, m)."""
    colour, shape, reg, mask = encoder_targets(ids, scenes, index)
    o_logit, c_logits, s_logits, r_pred = encoder.read(as_tensor(images[index]))
    return {"objectness_acc": float(((o_logit[..., 0] > 0) == mask).float().mean()),
            "colour_acc": float((c_logits.argmax(-1) == colour)[mask].float().mean()),
            "shape_acc": float((s_logits.argmax(-1) == shape)[mask].float().mean()),
            "depth_mae_m": float((r_pred[..., 1] - reg[..., 1])[mask].abs().mean() * REG_SCALE[1]),
            "object_cells": float(mask.float().mean())}


# ---- the VLM: the frozen encoder's patch tokens, a trained projector and a small transformer ----

class VLM(nn.Module):
    def __init__(self, vocab_size: int, n_answers: int, width: int = 64, d: int = 64, layers: int = 2, heads: int = 4):
        super().__init__()
        self.projector = nn.Sequential(nn.Linear(width, d), nn.GELU(), nn.Linear(d, d))  # InternVL's MLP projector
        self.patch_norm = nn.LayerNorm(d)  # the encoder's scale is not the embeddings': without it nothing bound
        self.patch_pos = nn.Parameter(torch.randn(GRID * GRID, d) * 0.02)
        self.view = nn.Parameter(torch.randn(2, d) * 0.02)
        self.embed = nn.Embedding(vocab_size, d, padding_idx=0)
        self.text_pos = nn.Parameter(torch.randn(MAX_TOKENS, d) * 0.02)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True,
                                                                        norm_first=True),
                                             layers)
        self.head = nn.Linear(d, n_answers)

    def forward(self, features: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        """features (b, views, GRID * GRID, width) from the encoder, text (b, MAX_TOKENS) -> answer logits."""
        b, v, n = features.shape[:3]
        patches = self.patch_norm(self.projector(features)) + self.patch_pos + self.view[:v, None]
        # one summary token per view, its patches max-pooled: through the CLS token's attention alone (a mean at
        # the start) a lone object's colour was not learnt, through a max-pool it is (measured: 0.16 vs 1.00)
        summary = patches.amax(2)  # (b, v, d)
        seq = torch.cat([self.cls.expand(b, -1, -1), summary, patches.reshape(b, v * n, -1),
                         self.embed(text) + self.text_pos], 1)
        pad = torch.cat([torch.zeros(b, 1 + v + v * n, dtype=torch.bool), text == 0], 1)
        return self.head(self.encoder(seq, src_key_padding_mask=pad)[:, 0])


class Data:
    """The images, ids and QA of the data step, the frozen encoder's features of every raw image (computed once), and
    the encoding of an item in a format (an overlay image is encoded when it is read)."""

    def __init__(self, images: np.ndarray, ids: np.ndarray, record: dict, encoder: Encoder, chunk: int = 512):
        self.images, self.ids, self.scenes, self.items = images, ids, record["scenes"], record["items"]
        self.vocab = vocabulary([it for split in self.items.values() for it in split],
                                [s["names"] for s in self.scenes])
        self.answer_index = {a: i for i, a in enumerate(qa.ANSWERS)}
        self.encoder = encoder.eval()
        with torch.no_grad():
            self.features = torch.cat([encoder(as_tensor(images[j:j + chunk])) for j in range(0, len(images), chunk)])

    def encode(self, it: dict, fmt: str = "nl+raw", cues: list[int] | None = None) -> tuple[list, list[int]]:
        """(per view: the image's index when it is raw, else the overlaid image; token ids) of an item in a format."""
        scene = self.scenes[it["scene"]]
        ann = scene["anns"][it["views"][0]]
        cues = cues or it["refs"]
        views = []
        for v in range(len(it["views"])):
            k = qa.image_index(it, v)
            raw = self.images[k]
            drawn = qa.overlay(raw, self.ids[k], ann, fmt, cues) if v == 0 else raw
            views.append(k if drawn is raw else drawn)
        return views, tokens(qa.question_text(it, scene["names"], ann, fmt, cues), self.vocab)

    @torch.no_grad()
    def features_of(self, views: list[list]) -> torch.Tensor:
        """(b, views, GRID * GRID, width): cached features for raw images, the overlaid ones encoded in one go."""
        drawn = [x for row in views for x in row if not isinstance(x, int)]
        fresh = iter(self.encoder(as_tensor(np.stack(drawn)))) if drawn else iter(())
        return torch.stack([torch.stack([self.features[x] if isinstance(x, int) else next(fresh) for x in row])
                            for row in views])

    def wrong_cues(self, it: dict, rng: np.random.Generator) -> list[int]:
        """Other visible objects for each referred one (the wrong-cue control), where the view has any."""
        ann = self.scenes[it["scene"]]["anns"][it["views"][0]]
        vis = [i for i, a in enumerate(ann) if a["visible"]]
        out = []
        for ref in it["refs"]:
            others = [i for i in vis if i != ref]
            out.append(int(rng.choice(others)) if others else ref)
        return out


def training_set(data: Data, regime: str, rng: np.random.Generator) -> list[tuple[dict, str, list[int] | None]]:
    """(item, format, cues) triples of one regime: m1 and m2 see the same items, only the formats differ."""
    train = data.items["train"]
    general = [it for it in train if it["kind"] == "general"]
    spatial = [it for it in train if it["kind"] != "general"]
    if regime == "m0":
        return [(it, "nl+raw", None) for it in general]
    kept = [] if regime == "m2_nogeneral" else [general[i] for i in rng.permutation(len(general))[:len(general) // 2]]
    if regime == "m2_shuffledgeneral":  # m2's kept items, their answers permuted per question type by a generator
        kept = [dict(it) for it in kept]  # of their own, so that rng (formats, batches) runs on exactly as for m2
        own = rng.spawn(1)[0]  # a child generator: rng's own state is not advanced
        for kind in ("what colour", "what shape"):
            group = [it for it in kept if it["question"].startswith(kind)]
            for it, a in zip(group, own.permutation([it["answer"] for it in group])):
                it["answer"] = str(a)
    if regime == "m2_shuffled":
        spatial = [dict(it) for it in spatial]
        for cat in sorted({it["category"] for it in spatial}):  # sorted: a set's order changes between runs
            group = [it for it in spatial if it["category"] == cat]
            answers = [it["answer"] for it in group]
            for it, a in zip(group, rng.permutation(answers)):
                it["answer"] = str(a)
    out = [(it, "nl+raw", None) for it in kept]
    for it in spatial:
        fmt = "nl+raw" if regime == "m1" or it["kind"] != "isb" else qa.FORMATS[int(rng.integers(len(qa.FORMATS)))]
        cues = data.wrong_cues(it, rng) if regime == "m2_wrongcue" and it["refs"] else None
        out.append((it, fmt, cues))
    return out


def batch(data: Data, rows) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    enc = [data.encode(it, fmt, cues) for it, fmt, cues in rows]
    return (data.features_of([e[0] for e in enc]), torch.tensor([e[1] for e in enc]),
            torch.tensor([data.answer_index[it["answer"]] for it, _, _ in rows]))


def groups_by_views(rows) -> dict[int, list]:
    out: dict[int, list] = {}
    for r in rows:
        out.setdefault(len(r[0]["views"]), []).append(r)
    return out


def train(model: VLM, data: Data, rows, p: dict, rng: np.random.Generator, curve) -> None:
    """Shuffled batches of one view count at a time (a batch's images stack), optimised as the encoder is."""
    def epoch_batches():
        chunks = []
        for group in groups_by_views(rows).values():
            order = rng.permutation(len(group))
            chunks += [[group[i] for i in order[j:j + p["batch"]]] for j in range(0, len(group), p["batch"])]
        for k in rng.permutation(len(chunks)):
            features, text, answers = batch(data, chunks[k])
            yield F.cross_entropy(model(features, text), answers), len(chunks[k])

    optimise(model, epoch_batches, sum(-(-len(g) // p["batch"]) for g in groups_by_views(rows).values()), p, curve)


def optimise(model: nn.Module, epoch_batches, per_epoch: int, p: dict, curve) -> None:
    """The loop the encoder's pretraining and every VLM share: AdamW (weight decay 0.01), a cosine schedule over
    p["epochs"] x per_epoch steps; epoch_batches() yields each batch's (loss, items) of one epoch; curve('loss',
    epoch, the epoch's mean loss per item)."""
    opt = torch.optim.AdamW(model.parameters(), lr=p["lr"], weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(1, per_epoch * p["epochs"]))
    model.train()
    for epoch in range(p["epochs"]):
        total, items = 0.0, 0
        for loss, n in epoch_batches():
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * n
            items += n
        curve("loss", epoch, total / items)
    model.eval()


def choose(logits: torch.Tensor, items: list[dict]) -> list[str]:
    """Each item's answer: the highest-scoring of its candidates (qa.candidates), as a multiple-choice benchmark
    scores; the answers of other categories are not in the running."""
    allowed = torch.zeros_like(logits, dtype=torch.bool)
    for row, it in enumerate(items):
        allowed[row, [qa.ANSWERS.index(a) for a in qa.candidates(it)]] = True
    return [qa.ANSWERS[k] for k in logits.masked_fill(~allowed, -torch.inf).argmax(1).tolist()]


@torch.no_grad()
def predict(model: VLM, data: Data, rows, chunk: int = 256) -> list[str]:
    """The model's answer among its candidates for each (item, format, cues) row."""
    out = [None] * len(rows)
    indexed = list(enumerate(rows))
    for v in (1, 2):
        sel = [(i, r) for i, r in indexed if len(r[0]["views"]) == v]
        for j in range(0, len(sel), chunk):
            part = sel[j:j + chunk]
            features, text, _ = batch(data, [r for _, r in part])
            for (i, _), said in zip(part, choose(model(features, text), [r[0] for _, r in part])):
                out[i] = said
    return out
