"""Claims: written in claims.yaml before results are seen, checked here with seed statistics.

A claim has one or more *checks*. Each check names a metric that the paper's evaluation measured once per
unit (a seed, a data set, a cell of the paper's table), a comparator, a threshold (per profile if needed)
and an aggregate (mean or median over units).

Verdict of a check, with x the aggregate and [lo, hi] the 95 % t-interval of the mean over units:
  * inconclusive - a value is missing/NaN, fewer units than the check (or its claim) asks for, or (n >= 2) the interval
                   contains the threshold: the seeds cannot tell the two sides apart;
  * pass / fail  - otherwise, whether x satisfies the comparator.
A claim passes when all its checks pass, fails when any fails, and is inconclusive otherwise.
Claims of kind ``info`` are measured and shown, never judged.
"""
from __future__ import annotations

import math
import operator

import numpy as np

OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def threshold_for(check: dict, profile: str) -> float:
    thr = check["threshold"]
    return float(thr.get(profile, thr["default"]) if isinstance(thr, dict) else thr)


def units_for(check: dict, claim: dict, profile: str) -> int:
    """How many units a check needs: its own `units` (a pooled count is one unit), else its claim's."""
    units = check.get("units", claim.get("units", 1))
    return int(units.get(profile, units.get("default", 1)) if isinstance(units, dict) else units)


def t_interval(values: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    n = len(values)
    if n < 2:
        return (float(values[0]), float(values[0])) if n else (math.nan, math.nan)
    half = stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n)
    return float(values.mean() - half), float(values.mean() + half)


def check_verdict(check: dict, values, profile: str, min_units: int) -> dict:
    values = np.asarray(values, dtype=float).ravel()
    op, thr = check["op"], threshold_for(check, profile)
    agg = check.get("aggregate", "mean")
    out = {"metric": check["metric"], "op": op, "threshold": thr, "aggregate": agg, "n": int(len(values)),
           "values": values.tolist()}
    if len(values) == 0 or np.isnan(values).any():  # e.g. a profile that does not run this comparison
        return out | {"value": None, "verdict": "inconclusive", "why": "not measured in this profile, or NaN"}
    passing = [OPS[op](v, thr) for v in values]
    if agg == "all":  # the worst unit
        value = float(values.max() if op.startswith("<") else values.min())
    else:
        value = float(np.median(values) if agg == "median" else values.mean())
    lo, hi = t_interval(values)
    out |= {"value": value, "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
            "min": float(values.min()), "max": float(values.max()), "ci95": [lo, hi],
            "frac_pass": float(np.mean(passing))}
    if len(values) < min_units:
        return out | {"verdict": "inconclusive", "why": f"{len(values)} units < {min_units} required"}
    if agg == "all":
        return out | {"verdict": "pass" if all(passing) else "fail"}
    if len(values) >= 2 and lo < hi and lo <= thr <= hi:  # a zero-spread exact value is decided
        return out | {"verdict": "inconclusive", "why": "95% interval over units contains the threshold"}
    return out | {"verdict": "pass" if OPS[op](value, thr) else "fail"}


def combine(verdicts: list[str]) -> str:
    if "fail" in verdicts:
        return "fail"
    return "pass" if verdicts and all(v == "pass" for v in verdicts) else "inconclusive"


def check(claims_yaml, measured: dict, profile: str, out, log=print) -> dict:
    """Judge a paper's claims.yaml on its measured values, write claims.json to `out`, log one line per claim."""
    from .io import write_json
    from .params import read_yaml

    result = evaluate(read_yaml(claims_yaml), measured, profile)
    write_json(out, result)
    for c in result["claims"]:
        log(f"claim {c['id']}: {c['verdict']} (first check: {c['measured']})")
    return result


def as_metrics(result: dict) -> dict:
    """MLflow metrics of a claims.json: each claim's first measured value, and pass (1/0) for judged claims."""
    metrics = {f"{c['id']}_measured": c["measured"] for c in result["claims"]}
    return metrics | {f"claim_{c['id']}_pass": float(c["verdict"] == "pass") for c in result["claims"] if c["verdict"] != "info"}


def evaluate(spec: dict, measured: dict, profile: str) -> dict:
    """spec: the parsed claims.yaml; measured: {metric: [value per unit]} -> the content of claims.json."""
    claims = []
    for claim in spec["claims"]:
        checks = [check_verdict(c, measured.get(c["metric"], []), profile, units_for(c, claim, profile))
                  for c in claim["checks"]]
        verdict = "info" if claim.get("kind") == "info" else combine([c["verdict"] for c in checks])
        claims.append({k: claim.get(k) for k in ("id", "statement", "paper_value", "source", "why", "kind")}
                      | {"verdict": verdict, "checks": checks, "measured": checks[0].get("value")})
    return {"paper": spec["paper"]["slug"], "profile": profile, "claims": claims,
            "summary": {v: sum(c["verdict"] == v for c in claims) for v in ("pass", "fail", "inconclusive", "info")}}
