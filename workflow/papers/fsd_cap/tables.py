"""Views of the long metrics table (one row per (graph, seed, method, task, mask, rate)) that the evaluate and the
plot steps share."""
from __future__ import annotations

import numpy as np
import pandas as pd


def at_rate(t: pd.DataFrame, rate: float, task: str) -> pd.DataFrame:
    """Rows of one task at the main missing rate; `full` (no mask) is repeated under every mask kind."""
    t = t[t.task.eq(task)]
    main = t[np.isclose(t.rate, rate)]
    full = t[t.method.eq("full")]
    kinds = sorted(set(main["mask"]))
    return pd.concat([main] + [full.assign(mask=k) for k in kinds], ignore_index=True)
