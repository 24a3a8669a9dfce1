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


def draw_table(ax, cells, header, row_scale: float = 1.25, **table_kw):
    """A table filling `ax` (axis hidden): font 8, light grid, bold grey header row. Returns it for row shading."""
    ax.axis("off")
    tab = ax.table(cellText=cells, colLabels=header, **table_kw)
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    tab.scale(1, row_scale)
    for (row, _), cell in tab.get_celld().items():
        cell.set_edgecolor("#cccccc")
        if row == 0:
            cell.set_facecolor("#e8e8e8")
            cell.set_text_props(weight="bold")
    return tab
