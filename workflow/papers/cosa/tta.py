"""Test-time adaptation of one frozen base: every method on the leakage-free stream of one (data set, base, horizon) cell.

Hyper-parameters (adaptation lr x steps) of COSA and TAFAS-lite are chosen on the *validation* stream only;
COSA's ablations reuse COSA's choice (an ablation changes one component, not the tuning).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, write_json, write_npz
from workflow.core.step import Step

from . import stream
from .train_base import load_base, split_of

TUNED = {"cosa": "cosa", "tafas_lite": "tafas_lite", "cosa_no_ctx": "cosa", "cosa_no_gate": "cosa",
         "cosa_no_pogt": "cosa", "cosa_no_calr": "cosa"}  # method -> whose validation choice it uses


def evaluate_cell(base, series, split: dict, lookback: int, horizon: int, p: dict, log=print) -> tuple[dict, dict]:
    """Select on validation, then run every method on the test stream. Returns (summary, per-window traces)."""
    common = dict(context_size=p["context_size"], l2_reg=p["l2_reg"])
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
    summary["leak_check"] = leak_check(base, series, split["test"], lookback, horizon, chosen.get("cosa"), common)
    return summary, traces


def state_hash(model) -> str:
    import hashlib

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def leak_check(base, series, segment, lookback: int, horizon: int, hp: dict | None, common: dict) -> dict:
    """Claim K4 on this cell: COSA's predictions with every unobserved value masked to NaN must be bit-identical,
    and the frozen base's weights unchanged."""
    hp = hp or {"lr": 1e-3, "steps": 1}
    before = state_hash(base)
    runs = [stream.run_stream(base, series, segment, lookback, horizon, "cosa", lr=hp["lr"], steps=hp["steps"],
                              mask_future=masked, return_predictions=True, **common) for masked in (False, True)]
    diff = np.abs(runs[0]["predictions"] - runs[1]["predictions"])
    return {"max_abs_pred_change": float(np.nan_to_num(diff, nan=np.inf).max()), "base_changed": float(state_hash(base) != before)}


def main(argv=None):
    step = Step("cosa", "tta", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--base", type=Path, required=True, help="frozen base checkpoint")
    step.parser.add_argument("--horizon", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True, help=".json summary per method")
    step.parser.add_argument("--traces", type=Path, required=True, help=".npz per-window errors and gate traces")
    args, p = step.start(argv)
    data = read_npz(args.data)
    base = load_base(args.base)
    summary, traces = evaluate_cell(base, data["series"], split_of(data), p["lookback"], args.horizon, p, log=step.log)
    write_npz(args.traces, **traces)
    write_json(args.out, summary)
    methods = {m: s for m, s in summary.items() if m != "leak_check"}
    no_tta = methods["no_tta"]["mse"]
    step.finish(metrics={f"mse.{m}": s["mse"] for m, s in methods.items()}
                | {f"rel_impr.{m}": (no_tta - s["mse"]) / no_tta for m, s in methods.items()}
                | {f"leak_check.{k}": v for k, v in summary["leak_check"].items()},
                outputs=[args.out, args.traces])


if __name__ == "__main__":
    main()
