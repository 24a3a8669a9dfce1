"""The paper's main table (data set x base x horizon x seed rows, methods as columns) and the claims of claims.yaml.

The cells and their files (and the one whose traces Figs. B/C show) come from the paper's plan (``plan.cells``,
``plan.tta_path``, ``plan.trace_path`` of the ``cosa.datasets`` section), the same functions the rule file builds its
inputs from: no command line grows with the number of cells, and no file name is parsed back into its cell.

Each claim's metrics are measured once per unit (a cell, or a (base, seed) pair for K3) by ``measure``; the
negative controls and the placebos are judged by the same checks on ``measure`` with their run in COSA's place."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, read_npz, write_text
from workflow.core.step import Step

from . import plan

READS = ("cosa.datasets",)

CLAIMS = Path(__file__).with_name("claims.yaml")
REAL_HOURLY = ("vic_elec", "EPF_FR_BE")
ABLATIONS = {"context": "cosa_no_ctx", "gate": "cosa_no_gate", "pogt": "cosa_no_pogt", "calr": "cosa_no_calr"}
CONTROLS = {"stale_gt": "cosa_stale_gt", "leaky": "cosa_leak_one_step",  # claims.yaml control -> the run in COSA's place
            # placebos: COSA with only the credited ingredient made inert (the sign of the observed error; the
            # recency of the context; the output-only design), measured like the negative controls
            "placebo_residual_sign": "cosa_flip_resid", "placebo_context": "cosa_shuffled_ctx",
            "placebo_output_only": "cosa_input_gcm"}
# A/A nulls (claims.yaml `nulls:`): the comparator of the same (data set, base, horizon) and the next seed in COSA's
# place (claims.stand_in), so that a comparison meets the comparator's own seed-to-seed noise and nothing else.
NULLS = {"aa_no_tta": "no_tta", "aa_tafas": "tafas_lite"}
CELL = ["dataset", "base", "H", "seed"]


def long_table(cells: list[tuple]) -> pd.DataFrame:
    """One row per (cell, method) of the plan's cells (``plan.cells``: (dataset, base, H, seed), each read from its
    ``plan.tta_path``); the leakage check's numbers on the rows of the methods it ran."""
    rows = []
    for cell in cells:
        summary = read_json(Path(plan.tta_path(*cell)))
        leak = summary.pop("leak_check")
        no_tta = summary["no_tta"]["mse"]
        for method, r in summary.items():
            checked = leak.get(method, {})
            rows.append(dict(zip(CELL, cell)) | {"method": method, **r, "rel_impr": (no_tta - r["mse"]) / no_tta,
                                         **{f"leak_{k}": checked.get(k, np.nan) for k in
                                            ("max_abs_pred_change", "nonfinite_preds", "base_changed")}})
    return pd.DataFrame(rows)


def measure(t: pd.DataFrame, method: str = "cosa") -> dict[str, list[float]]:
    """{claim metric: [value per unit]} of ``method`` (COSA, or a control in its place) from the long table."""
    wide = t.pivot_table(index=CELL, columns="method", values=["mse", "seconds_per_window"])
    cells = wide.index.to_frame(index=False)
    main = (cells.dataset != "ett_like_mixed").to_numpy()
    mse = wide["mse"]
    # the gain over no TTA from the raw MSEs (as long_table's rel_impr), so that a run in COSA's place is measured
    # against the cell's own no-TTA base, not carried in with its own row's rel_impr
    rel = mse.rsub(mse["no_tta"], axis=0).div(mse["no_tta"], axis=0)
    m: dict[str, list[float]] = {}

    def put(name, series):
        values = [float(v) for v in np.asarray(series, dtype=float) if not np.isnan(v)]
        if values:
            m[name] = values

    if method not in mse:
        return m
    put("k1_rel_impr_ett_like", rel[method][cells.dataset.eq("ett_like").to_numpy()])
    put("k1_rel_impr_co2", rel[method][cells.dataset.eq("co2").to_numpy()])
    put("k1_rel_impr_real_hourly", rel[method][cells.dataset.isin(REAL_HOURLY).to_numpy()])
    if "tafas_lite" in mse:
        secs = wide["seconds_per_window"][main]
        put("k2_cosa_beats_tafas", (mse[method][main] < mse["tafas_lite"][main]).astype(float))
        put("k2_rel_impr_vs_tafas", (mse["tafas_lite"][main] - mse[method][main]) / mse["tafas_lite"][main])
        put("k2_time_ratio_cosa_over_tafas", secs[method] / secs["tafas_lite"])
    if "ett_like" in set(cells.dataset):  # K3: one unit per (base, seed), longest minus shortest horizon
        ett = rel[method].xs("ett_like", level="dataset")
        put("k3_long_minus_short_ett_like", [g.sort_index().iloc[-1] - g.sort_index().iloc[0]
                                             for _, g in ett.groupby(level=["base", "seed"]) if len(g) > 1])
    leak = t[t.method == method]
    put("k4_max_abs_pred_change_when_future_masked", leak.leak_max_abs_pred_change)
    put("k4_nonfinite_preds_when_future_masked", leak.leak_nonfinite_preds)
    put("k4_base_changed", leak.leak_base_changed)
    if "last_error" in mse:
        put("info_rel_impr_cosa_vs_last_error", [np.mean((mse["last_error"] - mse[method]) / mse["last_error"])])
    put("info_rel_impr_ett_like_mixed", rel[method][cells.dataset.eq("ett_like_mixed").to_numpy()])
    for component, ablation in ABLATIONS.items():
        if ablation in rel:
            put(f"info_gain_from_{component}", [np.mean(rel[method][main] - rel[ablation][main])])
    return m


def measure_nulls(t: pd.DataFrame) -> dict[str, dict[str, list[float]]]:
    """{A/A null: {claim metric: [value per unit]}}: ``measure`` on the long table with the comparator of the next
    seed of the same (data set, base, horizon) in COSA's place. It keeps every metric COSA has; a cell with one seed
    (vic_elec, EPF_FR_BE, the smoke profile) has no independent partner and gives no value there."""
    own = measure(t)
    out = {}
    for name, comparator in NULLS.items():
        null = measure(claims_mod.stand_in(t, "method", {"cosa": comparator}, seed="seed", keys=CELL[:-1]))
        out[name] = {metric: null.get(metric, []) for metric in own}
    return out


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
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--stream", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, datasets = step.start(argv)  # the rule reads cosa.datasets: the plan's cells
    table = long_table(plan.cells(datasets))
    controls = {name: measure(table, run) for name, run in CONTROLS.items()} | measure_nulls(table)
    result = claims_mod.check(CLAIMS, measure(table), args.profile, args.claims, step.log, controls=controls)
    write_text(args.table, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.stream, stream_trace(Path(plan.trace_path(datasets))).to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.stream, args.claims])


if __name__ == "__main__":
    main()
