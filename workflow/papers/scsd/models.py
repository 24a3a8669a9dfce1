"""SCSD (and its ablations), the late-fusion MLP and DICNet-lite as torch modules; one training loop; BR logistic regression.

Every network returns (fused probabilities [n, L], per-view probabilities list, view weights [n, V], loss terms dict)
from `forward(x, vmask, y, lmask)`; the loop, early stopping and evaluation are shared.
"""
from __future__ import annotations


import numpy as np
import torch
from torch import nn

from workflow.lib.training import EarlyStopping  # shared by every paper that trains with a validation split

from . import methods as M

SCSD_VARIANTS = {  # method -> switches of the full model (spec 3.3 ablations)
    "scsd": {},
    "scsd_no_vq": {"vq": False},
    "scsd_no_xrec": {"cross_rec": False},
    "scsd_no_lcw": {"label_weights": False},
    "scsd_no_sd": {"distill": False},
    "scsd_frozen_codebook": {"learn_codebook": False},  # negative control: random codes that never learn
}
BASELINES = ("late_fusion_mlp", "dicnet_lite", "br_logreg")
METHODS = (*SCSD_VARIANTS, *BASELINES)


def mlp(sizes: list[int]) -> nn.Sequential:
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def encoder(d: int, z: int) -> nn.Sequential:
    """E_v: d -> 4z -> 2z -> z (ReLU), the official encoder shape at our z."""
    return mlp([d, 4 * z, 2 * z, z])


def decoder(z: int, d: int) -> nn.Sequential:
    """D_j: the mirror, z -> 2z -> 4z -> d."""
    return mlp([z, 2 * z, 4 * z, d])


class SCSD(nn.Module):
    def __init__(self, dims: list[int], n_labels: int, s_global: torch.Tensor, p: dict, vq: bool = True,
                 cross_rec: bool = True, label_weights: bool = True, distill: bool = True, learn_codebook: bool = True,
                 seed: int = 0):
        super().__init__()
        z = p["z_dim"]
        self.encoders = nn.ModuleList(encoder(d, z) for d in dims)
        self.decoders = nn.ModuleList(decoder(z, d) for d in dims)
        self.classifiers = nn.ModuleList(nn.Linear(z, n_labels) for _ in dims)
        self.vq = M.NormEMAVectorQuantizer(p["n_codes"], p["code_dim"], p["ema_decay"], p["kmeans_iters"], seed,
                                           learn=learn_codebook) if vq else None
        self.register_buffer("s_global", s_global)
        self.cross_rec, self.label_weights, self.distill = cross_rec, label_weights, distill
        self.alpha, self.lam, self.tau = p["alpha"], p["lam"], p["tau"]

    def forward(self, x, vmask, y=None, lmask=None):
        n_views = len(x)
        zs, qloss = [], torch.zeros(())
        for v in range(n_views):
            z = self.encoders[v](x[v])
            if self.vq is not None:
                seen = vmask[:, v] > 0  # only available views are quantised (and update the codebook)
                zq = torch.zeros_like(z)
                if seen.any():
                    q, loss_v, _ = self.vq(z[seen])
                    zq = zq.index_put((seen.nonzero(as_tuple=True)[0],), q)
                    qloss = qloss + loss_v
                z = zq
            zs.append(z)
        probs = [torch.sigmoid(self.classifiers[v](zs[v])) for v in range(n_views)]
        if self.label_weights:
            quality = M.view_quality([p.detach() for p in probs], vmask, self.s_global)
            w = M.view_weights(quality, vmask, self.tau)
        else:
            quality, w = torch.zeros(n_views), M.uniform_weights(vmask)
        fused = M.fuse(probs, w)
        out = {"quality": quality}
        if y is None:
            return fused, probs, w, out
        pairs = [(v, j) for v in range(n_views) for j in range(n_views) if self.cross_rec or v == j]
        recon = {(v, j): self.decoders[j](zs[v]) for v, j in pairs}
        l_rec = M.cross_view_reconstruction(x, recon, vmask)
        l_view = torch.zeros(())
        for v in range(n_views):
            sup = M.masked_bce(probs[v], y, lmask, vmask[:, v])
            if self.distill:
                teach = M.masked_bce(probs[v], fused.detach(), torch.ones_like(y), vmask[:, v])
                l_view = l_view + self.lam * teach + (1 - self.lam) * sup
            else:
                l_view = l_view + sup
        loss = M.masked_bce(fused, y, lmask) + self.alpha * l_rec + qloss + l_view
        return fused, probs, w, out | {"loss": loss, "rec": l_rec.detach(), "vq": qloss.detach()}


class LateFusion(nn.Module):
    """Encoders + per-view classifiers, probabilities averaged over available views, masked BCE on the fusion."""

    def __init__(self, dims, n_labels, p):
        super().__init__()
        self.encoders = nn.ModuleList(encoder(d, p["z_dim"]) for d in dims)
        self.classifiers = nn.ModuleList(nn.Linear(p["z_dim"], n_labels) for _ in dims)

    def forward(self, x, vmask, y=None, lmask=None):
        probs = [torch.sigmoid(c(e(xv))) for e, c, xv in zip(self.encoders, self.classifiers, x)]
        w = M.uniform_weights(vmask)
        fused = M.fuse(probs, w)
        out = {"quality": torch.zeros(len(x))}
        if y is not None:
            out["loss"] = M.masked_bce(fused, y, lmask)
        return fused, probs, w, out


class DICNetLite(nn.Module):
    """DICNet's recipe in miniature: encoders, self-reconstruction, InfoNCE across the available views of a sample,
    learned softmax view weights fusing the embeddings, one shared classifier."""

    def __init__(self, dims, n_labels, p):
        super().__init__()
        z = p["z_dim"]
        self.encoders = nn.ModuleList(encoder(d, z) for d in dims)
        self.decoders = nn.ModuleList(decoder(z, d) for d in dims)
        self.view_logits = nn.Parameter(torch.zeros(len(dims)))
        self.classifier = nn.Linear(z, n_labels)
        self.alpha, self.tau_c, self.beta = p["alpha"], p["tau_contrastive"], p["contrastive_weight"]

    def forward(self, x, vmask, y=None, lmask=None):
        zs = [e(xv) for e, xv in zip(self.encoders, x)]
        w = M.view_weights(self.view_logits, vmask, 1.0)
        fused_z = sum(w[:, v:v + 1] * z for v, z in enumerate(zs))
        fused = torch.sigmoid(self.classifier(fused_z))
        probs = [torch.sigmoid(self.classifier(z)) for z in zs]
        out = {"quality": self.view_logits.detach()}
        if y is None:
            return fused, probs, w, out
        recon = {(v, v): self.decoders[v](zs[v]) for v in range(len(x))}
        l_rec = M.cross_view_reconstruction(x, recon, vmask)
        l_con, pairs = torch.zeros(()), 0
        for a in range(len(x)):
            for b in range(a + 1, len(x)):
                both = (vmask[:, a] > 0) & (vmask[:, b] > 0)
                if both.sum() >= 2:
                    l_con, pairs = l_con + M.info_nce(zs[a][both], zs[b][both], self.tau_c), pairs + 1
        out["loss"] = M.masked_bce(fused, y, lmask) + self.alpha * l_rec + self.beta * l_con / max(pairs, 1)
        return fused, probs, w, out


def build(method: str, dims, n_labels, s_global, p, seed):
    torch.manual_seed(seed)
    if method in SCSD_VARIANTS:
        return SCSD(dims, n_labels, s_global, p, seed=seed, **SCSD_VARIANTS[method])
    if method == "late_fusion_mlp":
        return LateFusion(dims, n_labels, p)
    if method == "dicnet_lite":
        return DICNetLite(dims, n_labels, p)
    raise ValueError(f"unknown network method '{method}'; known: {', '.join(METHODS)}")


def to_tensors(views, idx, vmask):
    return [torch.from_numpy(v[idx]) for v in views], torch.from_numpy(vmask[idx])


@torch.no_grad()
def predict(model, views, idx, vmask):
    """Fused and per-view probabilities + weights of a whole split in one pass (S_v from the whole split)."""
    model.eval()
    x, m = to_tensors(views, idx, vmask)
    fused, probs, w, out = model(x, m)
    return fused.numpy(), [p.numpy() for p in probs], w.numpy(), out["quality"].numpy()


def train(model, views, vmask, split, y_all, p, seed, progress=None) -> dict:
    """AdamW (no weight decay on codes: they are buffers), grad-norm clip, early stopping on the val score."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=p["lr"], weight_decay=p["weight_decay"])
    train_idx, val_idx = split["train"], split["val"]
    y_tr, l_tr = torch.from_numpy(split["y_train"]), torch.from_numpy(split["label_mask"])
    stopper, history = EarlyStopping(model, p["patience"], higher_is_better=True), []
    for epoch in range(p["epochs"]):
        model.train()
        if getattr(model, "vq", None) is not None:
            model.vq.usage.zero_()
        order = torch.randperm(len(train_idx), generator=gen).numpy()
        losses = []
        for start in range(0, len(order), p["batch_size"]):
            b = order[start:start + p["batch_size"]]
            x, m = to_tensors(views, train_idx[b], vmask)
            _, _, _, out = model(x, m, y_tr[b], l_tr[b])
            opt.zero_grad()
            out["loss"].backward()
            nn.utils.clip_grad_norm_(model.parameters(), p["grad_clip"])
            opt.step()
            losses.append(float(out["loss"].detach()))
        fused, _, _, _ = predict(model, views, val_idx, vmask)
        score = M.val_score(M.multilabel_metrics(y_all[val_idx], fused))
        history.append((epoch, float(np.mean(losses)), score))
        if progress:
            progress(epoch, history[-1][1], score)
        if stopper.update(epoch, score):
            break
    usage = float((model.vq.usage > 0).float().mean()) if getattr(model, "vq", None) is not None else float("nan")
    stopper.restore()
    return {"history": history, "best_val_score": stopper.best, "epochs_run": len(history), "codebook_usage": usage}


def br_logreg(views, vmask, split, c: float = 1.0, max_iter: int = 500):
    """Binary relevance logistic regression per view (observed labels of training samples that have the view);
    scores averaged over each test sample's available views. A label with one observed class predicts its rate."""
    from sklearn.linear_model import LogisticRegression

    train, y, lm = split["train"], split["y_train"], split["label_mask"]
    models = []
    for v, x in enumerate(views):
        per_label = []
        for k in range(y.shape[1]):
            rows = (vmask[train, v] > 0) & (lm[:, k] > 0)
            target = y[rows, k]
            if len(np.unique(target)) < 2:
                per_label.append(float(target.mean()) if len(target) else 0.5)
            else:
                per_label.append(LogisticRegression(C=c, max_iter=max_iter).fit(x[train[rows]], target))
        models.append(per_label)

    def predict_split(idx):
        probs = []
        for v, x in enumerate(views):
            cols = [np.full(len(idx), m) if isinstance(m, float) else m.predict_proba(x[idx])[:, 1] for m in models[v]]
            probs.append(np.stack(cols, 1))
        w = M.uniform_weights(torch.from_numpy(vmask[idx])).numpy()
        return sum(w[:, v:v + 1] * pv for v, pv in enumerate(probs)), probs, w

    return predict_split
