"""Test-time adaptation of one frozen base: every method on the leakage-free stream of one (data set, base, horizon) cell.

Hyper-parameters (adaptation lr x steps) of COSA and TAFAS-lite are chosen on the *validation* stream only;
COSA's ablations, its two negative controls and its three placebos reuse COSA's choice (they change one component,
not the tuning).
The leakage check (K4) runs COSA, and its deliberately leaky control, with the future masked.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, write_json, write_npz
from workflow.core.step import Step
from workflow.lib.training import state_hash

from . import datasets, models, stream

READS = ("cosa.datasets.{dataset}.lookback", "cosa.tta")

TUNED = {"cosa": "cosa", "tafas_lite": "tafas_lite", "cosa_no_ctx": "cosa", "cosa_no_gate": "cosa",
         "cosa_no_pogt": "cosa", "cosa_no_calr": "cosa", "cosa_stale_gt": "cosa",
         "cosa_leak_one_step": "cosa", "cosa_flip_resid": "cosa",
         "cosa_shuffled_ctx": "cosa", "cosa_input_gcm": "cosa"}  # method -> whose validation choice it uses
LEAK_CHECKED = ("cosa", "cosa_leak_one_step")  # the method K4 is about, and the leak the check must catch


def evaluate_cell(base, series, split: dict, lookback: int, horizon: int, p: dict, seed: int = 0,
                  log=print) -> tuple[dict, dict]:
    """Select on validation, then run every method on the test stream. Returns (summary, per-window traces).

    ``seed`` initialises the adapters and draws the stale control's windows (from the training segment)."""
    common = dict(context_size=p["context_size"], l2_reg=p["l2_reg"], seed=seed, stale_pool=split["train"])
    chosen = {}
    for family in sorted({TUNED[m] for m in p["methods"] if m in TUNED}):
        sel = stream.select_hparams(base, series, split["val"], lookback, horizon, family,
                                    lrs=tuple(p["lrs"]), steps_grid=tuple(p["steps_grid"]), **common)
        chosen[family] = sel
        log(f"{family}: validation picks lr={sel['lr']} steps={sel['steps']} (val MSE {sel['val_mse']:.4f})")
    summary, traces = {}, {}
    for method in p["methods"]:
        hp = chosen.get(TUNED.get(method), {"lr": 1e-3, "steps": 1})
        r = stream.run_stream(base, series, split["test"], lookback, horizon, method,
                              lr=hp["lr"] or 1e-3, steps=hp["steps"] or 1, **common)
        log(f"{method}: test MSE {r['mse']:.4f} MAE {r['mae']:.4f} ({r['seconds_per_window'] * 1e3:.2f} ms/window)")
        summary[method] = {"mse": r["mse"], "mae": r["mae"], "seconds_per_window": r["seconds_per_window"],
                           "adapter_params": r["adapter_params"], "base_params": r["base_params"],
                           "n_windows": r["n_windows"], "lr": hp["lr"], "steps": hp["steps"], "val_mse": hp.get("val_mse")}
        traces[f"window_mse__{method}"] = np.asarray(r["window_mse"])
        traces[f"gate__{method}"] = np.asarray(r["gate"], dtype=float)
    summary["leak_check"] = {m: leak_check(base, series, split["test"], lookback, horizon, m, chosen.get("cosa"), common)
                             for m in LEAK_CHECKED if m in p["methods"]}
    return summary, traces


def leak_check(base, series, segment, lookback: int, horizon: int, method: str, hp: dict | None, common: dict) -> dict:
    """Claim K4 on this cell: the method's predictions with every unobserved value masked to NaN must be
    bit-identical and finite, and the frozen base's weights unchanged.

    Two finite numbers say it: the largest change among predictions that stay finite, and how many predictions
    a masked (NaN) value reached (a leak that reads the future turns them NaN)."""
    hp = hp or {"lr": 1e-3, "steps": 1}
    before = state_hash(base)
    plain, masked = (stream.run_stream(base, series, segment, lookback, horizon, method, lr=hp["lr"], steps=hp["steps"],
                                       mask_future=m, return_predictions=True, **common)["predictions"] for m in (False, True))
    finite = np.isfinite(plain) & np.isfinite(masked)
    diff = np.abs(plain - masked)[finite]
    return {"max_abs_pred_change": float(diff.max()) if diff.size else 0.0,
            "nonfinite_preds": float((np.isfinite(plain) & ~np.isfinite(masked)).sum()),
            "base_changed": float(state_hash(base) != before)}


def main(argv=None):
    step = Step("cosa", "tta", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, required=True, help="frozen base checkpoint")
    step.parser.add_argument("--horizon", type=int, required=True)
    step.parser.add_argument("--seed", type=int, required=True, help="the cell's seed (adapter init, stale control)")
    step.parser.add_argument("--out", type=Path, required=True, help=".json summary per method")
    step.parser.add_argument("--traces", type=Path, required=True, help=".npz per-window errors and gate traces")
    args, p = step.start(argv)
    data = read_npz(args.data)
    base = models.load_base(args.base)
    summary, traces = evaluate_cell(base, data["series"], datasets.split_of(data), p["lookback"], args.horizon, p,
                                    seed=args.seed, log=step.log)
    write_npz(args.traces, **traces)
    write_json(args.out, summary)
    runs = {m: s for m, s in summary.items() if m != "leak_check"}
    no_tta = runs["no_tta"]["mse"]
    step.finish(metrics={f"mse.{m}": s["mse"] for m, s in runs.items()}
                | {f"rel_impr.{m}": (no_tta - s["mse"]) / no_tta for m, s in runs.items()}
                | {f"leak_check.{m}.{k}": v for m, check in summary["leak_check"].items() for k, v in check.items()},
                outputs=[args.out, args.traces])


if __name__ == "__main__":
    main()
