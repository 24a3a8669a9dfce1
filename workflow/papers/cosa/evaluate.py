"""The paper's main table (data set x base x horizon rows, methods as columns) and the claims of claims.yaml."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, read_npz, write_text
from workflow.core.step import Step

CLAIMS = Path(__file__).with_name("claims.yaml")
REAL_HOURLY = ("vic_elec", "EPF_FR_BE")
ABLATIONS = {"context": "cosa_no_ctx", "gate": "cosa_no_gate", "pogt": "cosa_no_pogt", "calr": "cosa_no_calr"}


def cell_of(path: Path) -> dict:
    """results/cosa/tta/<dataset>/<base>_H<h>.json -> {'dataset', 'base', 'H'}."""
    base, h = path.stem.rsplit("_H", 1)
    return {"dataset": path.parent.name, "base": base, "H": int(h)}


def long_table(paths: list[Path]) -> pd.DataFrame:
    rows = []
    for path in paths:
        summary = read_json(path)
        leak = summary.pop("leak_check")
        no_tta = summary["no_tta"]["mse"]
        for method, r in summary.items():
            rows.append(cell_of(path) | {"method": method, **r, "rel_impr": (no_tta - r["mse"]) / no_tta,
                                         "leak_max_abs_pred_change": leak["max_abs_pred_change"], "leak_base_changed": leak["base_changed"]})
    return pd.DataFrame(rows)


def measure(t: pd.DataFrame) -> dict[str, list[float]]:
    """{claim metric: [value per cell]} from the long table."""
    wide = t.pivot_table(index=["dataset", "base", "H"], columns="method", values=["mse", "rel_impr", "seconds_per_window"])
    cells = wide.index.to_frame(index=False)
    main = cells.dataset != "ett_like_mixed"
    rel = wide["rel_impr"]
    m: dict[str, list[float]] = {}

    def put(name, series):
        values = [float(v) for v in np.asarray(series, dtype=float) if not np.isnan(v)]
        if values:
            m[name] = values

    put("k1_rel_impr_ett_like", rel["cosa"][cells.dataset.eq("ett_like").to_numpy()])
    put("k1_rel_impr_co2", rel["cosa"][cells.dataset.eq("co2").to_numpy()])
    put("k1_rel_impr_real_hourly", rel["cosa"][cells.dataset.isin(REAL_HOURLY).to_numpy()])
    if "tafas_lite" in wide["mse"]:
        mse, secs = wide["mse"][main.to_numpy()], wide["seconds_per_window"][main.to_numpy()]
        put("k2_cosa_beats_tafas", (mse["cosa"] < mse["tafas_lite"]).astype(float))
        put("k2_rel_impr_vs_tafas", (mse["tafas_lite"] - mse["cosa"]) / mse["tafas_lite"])
        put("k2_time_ratio_cosa_over_tafas", secs["cosa"] / secs["tafas_lite"])
    ett = rel["cosa"].xs("ett_like", level="dataset")
    gaps = [g.sort_index().iloc[-1] - g.sort_index().iloc[0] for _, g in ett.groupby(level="base") if len(g) > 1]
    put("k3_long_minus_short_ett_like", gaps)
    leak = t.drop_duplicates(["dataset", "base", "H"])
    put("k4_max_abs_pred_change_when_future_masked", leak.leak_max_abs_pred_change)
    put("k4_base_changed", leak.leak_base_changed)
    if "last_error" in wide["mse"]:
        put("info_rel_impr_cosa_vs_last_error", [np.mean((wide["mse"]["last_error"] - wide["mse"]["cosa"]) / wide["mse"]["last_error"])])
    put("info_rel_impr_ett_like_mixed", rel["cosa"][cells.dataset.eq("ett_like_mixed").to_numpy()])
    for component, ablation in ABLATIONS.items():
        if ablation in rel:
            put(f"info_gain_from_{component}", [np.mean(rel["cosa"][main.to_numpy()] - rel[ablation][main.to_numpy()])])
    return m


def stream_trace(traces: Path) -> pd.DataFrame:
    """Per-window test MSE and gate of one cell, for the stream figures."""
    z = read_npz(traces)
    rows = []
    for key, values in z.items():
        kind, method = key.split("__")
        rows.append(pd.DataFrame({"method": method, "kind": kind, "index": np.arange(len(values)), "value": values}))
    return pd.concat(rows, ignore_index=True)


def main(argv=None):
    step = Step("cosa", "evaluate", __doc__)
    step.parser.add_argument("cells", type=Path, nargs="+", help="tta/<dataset>/<base>_H<h>.json files")
    step.parser.add_argument("--traces", type=Path, required=True, help="the .npz traces of the cell shown in Figs. B/C")
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--stream", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, _ = step.start(argv)
    table = long_table(args.cells)
    result = claims_mod.check(CLAIMS, measure(table), args.profile, args.claims, step.log)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.stream, stream_trace(args.traces).to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.stream, args.claims])


if __name__ == "__main__":
    main()
