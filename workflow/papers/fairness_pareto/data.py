"""Raw Adult / COMPAS text -> standardised feature matrices, label, group and a seeded train/val/test split.

Pure functions (the step reads the catalog files and passes their text; the parsers take text). Preprocessing as the spec: one-hot
categoricals, standardised numericals, both fitted on the training rows only.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
              "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
              "income"]


def parse_adult(text: str, task: str = "income"):
    """Raw UCI ``adult.data``/``adult.test`` text -> (DataFrame of features, y, group). ``adult.test``'s
    first line ``|1x3 Cross validator`` is skipped and trailing ``.`` in labels stripped; rows with '?' are
    kept (as a category). group = 1[sex == Male]. task "income": y = 1[income > 50K]; task "married":
    y = 1[marital-status == Married-civ-spouse] and marital-status is dropped from the features."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("|")]
    df = pd.read_csv(io.StringIO("\n".join(lines)), header=None, names=ADULT_COLS, skipinitialspace=True)
    inc = df.pop("income").str.rstrip(".")
    group = (df["sex"] == "Male").astype(int).to_numpy()
    if task == "income":
        y = (inc == ">50K").astype(int).to_numpy()
    elif task == "married":
        y = (df.pop("marital-status") == "Married-civ-spouse").astype(int).to_numpy()
    else:
        raise ValueError(task)
    return df.drop(columns=["sex"]), y, group


def parse_compas(text: str):
    """ProPublica ``compas-scores-two-years.csv`` text -> (DataFrame, y, group). ProPublica filter
    (|days_b_screening_arrest| <= 30, is_recid != -1, c_charge_degree != 'O', score_text != 'N/A'),
    then African-American (group 1) vs Caucasian (group 0); y = two_year_recid."""
    df = pd.read_csv(io.StringIO(text))
    df = df[(df.days_b_screening_arrest <= 30) & (df.days_b_screening_arrest >= -30) & (df.is_recid != -1)
            & (df.c_charge_degree != "O") & (df.score_text != "N/A")]
    df = df[df.race.isin(["African-American", "Caucasian"])]
    y = df["two_year_recid"].astype(int).to_numpy()
    group = (df["race"] == "African-American").astype(int).to_numpy()
    feats = df[["sex", "age", "age_cat", "c_charge_degree", "priors_count", "juv_fel_count", "juv_misd_count",
                "juv_other_count"]].reset_index(drop=True)
    return feats, y, group


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
        Xtr, ytr, gtr = parse_adult(texts["adult_train"], task)
        Xte, yte, gte = parse_adult(texts["adult_test"], task)
        tr, va = split_indices(len(ytr), [1 - val_frac, val_frac], seed)
        frames = {"train": Xtr.iloc[tr], "val": Xtr.iloc[va], "test": Xte}
        ys = {"train": ytr[tr], "val": ytr[va], "test": yte}
        gs = {"train": gtr[tr], "val": gtr[va], "test": gte}
    elif source == "compas":
        if task != "recid":
            raise ValueError(f"COMPAS has one task, 'recid', not '{task}'")
        X, y, g = parse_compas(texts["compas"])
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
