"""The three multi-view multi-label data sets of the miniature and the per-fold incomplete split.

* synth  - seeded generator with known view quality (spec 3.3): latent z in R^8, 12 labels in 3 correlated
           groups, 4 views of decreasing quality (noise 0.1 .. 1.2), half of each view's dims nuisance.
* mfeat  - UCI Multiple Features digits (6 real views), 8 labels derived from the digit glyph (spec 3.3).
* yeast  - Yeast (103 real features, 14 real labels), its features split into contiguous blocks as views.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # a DataFrame is passed in; the training jobs do not pay pandas' import
    import pandas as pd

from workflow.lib import mfeat
from workflow.lib.missing import flip_entries, label_mask, view_mask

# digit -> glyph properties (spec 3.3): loop, vertical stroke, top bar, bottom curve, even, >= 5, prime, mirror-symmetric
MFEAT_LABELS = {
    "loop": {0, 6, 8, 9}, "vertical_stroke": {1, 4, 7, 9}, "top_bar": {5, 7}, "bottom_curve": {0, 3, 5, 6, 8},
    "even": {0, 2, 4, 6, 8}, "ge5": {5, 6, 7, 8, 9}, "prime": {2, 3, 5, 7}, "mirror_symmetric": {0, 1, 8},
}


def mfeat_targets(digits: np.ndarray) -> np.ndarray:
    """[n, 8] 0/1 glyph labels of digit classes (the same for every digit of a class: correlated by construction)."""
    return np.stack([np.isin(digits, sorted(members)) for members in MFEAT_LABELS.values()], axis=1).astype(np.float32)


def synth(seed: int, n: int = 2000, latent: int = 8, groups: int = 3, per_group: int = 4,
          dims=(64, 48, 32, 16), noise=(0.1, 0.3, 0.6, 1.2), label_noise: float = 0.3) -> dict:
    """mvml_synth: y = 1[W z + b + label_noise * eps > 0], x_v = [tanh(A_v z) + noise_v * eps_v, nuisance N(0,1)].

    W is block-structured: label group g loads mainly on its own pair of latent dims (strong within-group
    correlation) and weakly on the rest; b puts each label's positive rate in [0.15, 0.30].
    """
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, latent))
    n_labels = groups * per_group
    w = 0.15 * rng.standard_normal((n_labels, latent))
    for g in range(groups):
        own = [(2 * g) % latent, (2 * g + 1) % latent]
        w[g * per_group:(g + 1) * per_group, own] += rng.normal(1.0, 0.2, (per_group, 2))
    logits = z @ w.T + label_noise * rng.standard_normal((n, n_labels))
    rates = rng.uniform(0.15, 0.30, n_labels)
    b = -np.array([np.quantile(logits[:, k], 1 - rates[k]) for k in range(n_labels)])
    y = (logits + b > 0).astype(np.float32)
    views = []
    for d, sigma in zip(dims, noise):
        informative = d // 2
        a = rng.standard_normal((informative, latent)) / np.sqrt(latent) * 1.5
        signal = np.tanh(z @ a.T) + sigma * rng.standard_normal((n, informative))
        views.append(np.concatenate([signal, rng.standard_normal((n, d - informative))], axis=1).astype(np.float32))
    return {"views": views, "y": y, "view_names": [f"v{i + 1}_sigma{s}" for i, s in enumerate(noise)]}


def yeast(table: pd.DataFrame, n_views: int) -> dict:
    """Yeast CSV (Att1..Att103, Class1..Class14) -> `n_views` contiguous feature blocks as views + 14 labels."""
    feats = [c for c in table.columns if c.startswith("Att")]
    labels = [c for c in table.columns if c.startswith("Class")]
    if len(feats) != 103 or len(labels) != 14:
        raise ValueError(f"yeast: expected 103 Att* and 14 Class* columns, got {len(feats)} and {len(labels)}. "
                         "Fix: re-fetch data/raw/yeast.csv from the catalog.")
    x = table[feats].to_numpy(np.float32)
    blocks = np.array_split(np.arange(x.shape[1]), n_views)
    return {"views": [x[:, idx] for idx in blocks], "y": table[labels].to_numpy(np.float32),
            "view_names": [f"att{idx[0] + 1}-{idx[-1] + 1}" for idx in blocks]}


def mfeat_data(paths: dict) -> dict:
    views, digits = mfeat.load_views(paths)
    return {"views": [v.astype(np.float32) for v in views.values()], "y": mfeat_targets(digits),
            "view_names": list(views), "digits": digits}


def incomplete_split(n: int, n_views: int, n_labels: int, fold: int, *, r_view: float, r_label: float,
                     val_frac: float, test_frac: float, n_train: int, label_flip: float, y: np.ndarray) -> dict:
    """One fold (fold = seed): shuffled split, view mask for every sample, label mask + flips on training labels only.

    Validation and test labels stay complete and clean (the protocol); their views are missing like training's.
    """
    rng = np.random.default_rng(1000 + fold)
    order = rng.permutation(n)
    n_val, n_test = int(round(val_frac * n)), int(round(test_frac * n))
    val, test, rest = order[:n_val], order[n_val:n_val + n_test], order[n_val + n_test:]
    train = rest[:n_train] if n_train else rest
    vmask = view_mask(n, n_views, r_view, rng)
    lmask = label_mask((len(train), n_labels), r_label, rng)
    y_train = flip_entries(y[train], label_flip, rng) if label_flip > 0 else y[train].copy()
    return {"train": train, "val": val, "test": test, "view_mask": vmask, "label_mask": lmask, "y_train": y_train}


def standardize_views(views: list[np.ndarray], train: np.ndarray, vmask: np.ndarray) -> list[np.ndarray]:
    """z-score each view with the statistics of the training samples that HAVE it, then zero-fill missing views."""
    out = []
    for v, x in enumerate(views):
        seen = train[vmask[train, v] > 0]
        mu, sd = x[seen].mean(0), x[seen].std(0)
        z = (x - mu) / np.where(sd > 0, sd, 1.0)
        out.append((z * vmask[:, v:v + 1]).astype(np.float32))
    return out
