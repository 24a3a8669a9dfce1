"""One look for every figure: a non-interactive backend and a seaborn theme."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # jobs have no screen

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

sns.set_theme(context="paper", style="whitegrid", palette="colorblind")


def subplots(nrows=1, ncols=1, width=4.0, height=3.0, **kw):
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, **kw)


def close(fig) -> None:
    plt.close(fig)


def save_all(figures, paths) -> None:
    """Write each figure to its path (atomically) and free it."""
    from .io import save_figure

    for fig, path in zip(figures, paths, strict=True):
        save_figure(fig, path)
        close(fig)
