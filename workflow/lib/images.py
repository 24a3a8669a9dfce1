"""Real image sets of the spiking-network papers: Fashion-MNIST (IDX files from the catalog) and, for the smoke
profile, scikit-learn's 8x8 digits. Images come out as float32 in [0, 1], shape (n, 1, side, side)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot")


def read_idx(path) -> np.ndarray:
    """An IDX file (LeCun's MNIST format): two zero bytes, a type code, the number of dimensions, the sizes
    (big-endian int32), then the data."""
    raw = Path(path).read_bytes()
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (header {raw[:4]!r})")
    ndim = raw[3]
    shape = tuple(int(d) for d in np.frombuffer(raw, ">i4", count=ndim, offset=4))
    dtype = np.dtype(IDX_TYPES[raw[2]])
    data = np.frombuffer(raw, dtype, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says {shape} ({int(np.prod(shape))} values), the file has {data.size}")
    return data.reshape(shape)


def fashion_paths(split: str, root: Path | str = "data/raw") -> tuple[Path, Path]:
    """(images, labels) of a Fashion-MNIST split ('train' or 'test'), as the fetch rule writes them."""
    return Path(root) / f"fashion_{split}_images.idx", Path(root) / f"fashion_{split}_labels.idx"


def stratified_subset(labels: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `per_class` examples of every class, drawn without replacement, in a shuffled order."""
    picks = [rng.choice(np.flatnonzero(labels == c), per_class, replace=False) for c in np.unique(labels)]
    return rng.permutation(np.concatenate(picks))


def fashion(images_path, labels_path, per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A class-balanced subset of a Fashion-MNIST split: (x float32 (n, 1, 28, 28) in [0, 1], y int64)."""
    x, y = read_idx(images_path), read_idx(labels_path).astype(np.int64)
    if len(x) != len(y):
        raise ValueError(f"{images_path} has {len(x)} images but {labels_path} has {len(y)} labels")
    idx = stratified_subset(y, per_class, rng)
    return (x[idx].astype(np.float32) / 255.0)[:, None], y[idx]


def fashion_splits(raw, train_per_class: int, test_per_class: int, rng: np.random.Generator) -> dict:
    """Balanced subsets of both Fashion-MNIST splits from the fetched files `raw` (the four data/raw/fashion_*.idx):
    {x_train, y_train, x_test, y_test}, the training split drawn first."""
    by_name = {Path(f).stem: f for f in raw}
    out = {}
    for split, per_class in (("train", train_per_class), ("test", test_per_class)):
        x, y = fashion(by_name[f"fashion_{split}_images"], by_name[f"fashion_{split}_labels"], per_class, rng)
        out[f"x_{split}"], out[f"y_{split}"] = x, y
    return out


def digits_split(test: int, rng: np.random.Generator) -> dict:
    """The 8x8 digits split at random into `test` test images and the rest for training."""
    x, y = digits()
    idx = rng.permutation(len(y))
    te, tr = idx[:test], idx[test:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te]}


def image_set(source: str, raw, train_per_class: int, test_per_class: int, digits_test: int,
              rng: np.random.Generator) -> dict:
    """A paper's image set, {x_train, y_train, x_test, y_test}: `source` "fashion" gives balanced Fashion-MNIST subsets
    of the fetched files `raw` (fashion_splits); any other source the 8x8 digits split at random (digits_split)."""
    if source == "fashion":
        return fashion_splits(raw, train_per_class, test_per_class, rng)
    return digits_split(digits_test, rng)


def digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 8x8 digits (bundled with the installed package): (x (n, 1, 8, 8) in [0, 1], y)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images.astype(np.float32) / 16.0)[:, None], d.target.astype(np.int64)
