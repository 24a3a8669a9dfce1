"""Raw Adult / COMPAS text -> standardised feature matrices, label, group and a seeded train/val/test split.

Pure functions (the step reads the catalog files and passes their text). Preprocessing as the spec: one-hot
categoricals, standardised numericals, both fitted on the training rows only.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import methods


def encode(frames: dict[str, pd.DataFrame]) -> dict[str, np.ndarray]:
    """One-hot the object columns and z-score the numeric ones; categories and moments from frames['train']."""
    train = frames["train"]
    cat = [c for c in train.columns if train[c].dtype == object or str(train[c].dtype).startswith("str")]
    num = [c for c in train.columns if c not in cat]
    columns = pd.get_dummies(train[cat].astype(str)).columns
    mu, sd = train[num].astype(float).mean(), train[num].astype(float).std().replace(0, 1.0)
    out = {}
    for name, df in frames.items():
        onehot = pd.get_dummies(df[cat].astype(str)).reindex(columns=columns, fill_value=0).astype(float)
        out[name] = np.hstack([((df[num].astype(float) - mu) / sd).to_numpy(), onehot.to_numpy()]).astype(np.float32)
    return out


def split_indices(n: int, fracs, seed: int) -> list[np.ndarray]:
    """Seeded random partition of range(n) into len(fracs) parts of the given fractions (last takes the rest)."""
    perm = np.random.default_rng(seed).permutation(n)
    cuts = np.round(np.cumsum(fracs)[:-1] * n).astype(int)
    return [np.sort(p) for p in np.split(perm, cuts)]


def load(source: str, task: str, texts: dict[str, str], seed: int, val_frac: float, compas_split) -> dict:
    """{"X_<part>", "y_<part>", "g_<part>"} for part in train/val/test, plus "features" (names).

    Adult: the official train file is split train/val (val_frac, seeded), adult.test is the test set.
    COMPAS: one table, split train/val/test by ``compas_split`` (seeded)."""
    if source == "adult":
        Xtr, ytr, gtr = methods.parse_adult(texts["adult_train"], task)
        Xte, yte, gte = methods.parse_adult(texts["adult_test"], task)
        tr, va = split_indices(len(ytr), [1 - val_frac, val_frac], seed)
        frames = {"train": Xtr.iloc[tr], "val": Xtr.iloc[va], "test": Xte}
        ys = {"train": ytr[tr], "val": ytr[va], "test": yte}
        gs = {"train": gtr[tr], "val": gtr[va], "test": gte}
    elif source == "compas":
        if task != "recid":
            raise ValueError(f"COMPAS has one task, 'recid', not '{task}'")
        X, y, g = methods.parse_compas(texts["compas"])
        parts = dict(zip(("train", "val", "test"), split_indices(len(y), compas_split, seed)))
        frames = {k: X.iloc[i] for k, i in parts.items()}
        ys, gs = {k: y[i] for k, i in parts.items()}, {k: g[i] for k, i in parts.items()}
    else:
        raise ValueError(f"unknown source '{source}' (adult or compas)")
    X = encode(frames)
    out = {"features": np.array(list(frames["train"].columns))}
    for k in ("train", "val", "test"):
        out |= {f"X_{k}": X[k], f"y_{k}": ys[k].astype(np.int64), f"g_{k}": gs[k].astype(np.int64)}
    return out
