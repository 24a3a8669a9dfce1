"""UCI Multiple Features (2,000 handwritten digits, six views): the real multi-view data of scsd and fsd_cap.

The catalog (workflow/catalog.yaml) holds one data set per view, `mfeat_<view>`, fetched by the `fetch`
rule to data/raw/mfeat_<view>.csv: a header row of column indices, then one row per digit with the
features and the class (0-9) in the last column. Rows are the same 2,000 digits in the same order in
every view; `load_views` checks that the labels agree, so a mixed-up file is caught, not learned from.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")  # UCI order; widths 76, 216, 64, 240, 47, 6


def raw_path(view: str, root: Path | str = "data/raw") -> Path:
    return Path(root) / f"mfeat_{view}.csv"


def paths_by_view(raw: list[Path | str], views=VIEWS) -> dict[str, Path]:
    """The files of `views` among a step's raw inputs (named mfeat_<view>.csv), in the order asked for."""
    by_view = {Path(r).stem.removeprefix("mfeat_"): Path(r) for r in raw}
    missing = [v for v in views if v not in by_view]
    if missing:
        raise ValueError(f"mfeat views {missing} are not among the inputs {[str(r) for r in raw]}. "
                         "Fix: list data/raw/mfeat_<view>.csv for each of them as the rule's inputs.")
    return {v: by_view[v] for v in views}


def load_view(path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """(features [2000, d] float64, labels [2000] int64) of one view file."""
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    if table.ndim != 2 or table.shape[0] != 2000:
        raise ValueError(f"{path}: expected 2,000 rows of features + label, got shape {table.shape}. "
                         "Fix: delete it and re-run the fetch rule (its checksum is in workflow/catalog.yaml).")
    return table[:, :-1], table[:, -1].astype(np.int64)


def load_views(paths: dict[str, Path | str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every requested view (name -> [2000, d_v]) and the shared labels; the views must agree on them."""
    views, labels = {}, None
    for name, path in paths.items():
        views[name], y = load_view(path)
        if labels is not None and not np.array_equal(y, labels):
            raise ValueError(f"{path}: labels differ from the other views'. The rows must be the same digits "
                             "in the same order. Fix: re-fetch the mfeat_* files from the catalog.")
        labels = y
    return views, labels


def standardize(x: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per feature (constant features stay 0): the views' scales differ by 10^4."""
    std = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
