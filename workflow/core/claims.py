"""Claims: written in claims.yaml before results are seen, judged here with seed statistics.

Kinds (every claim states one):
  * ``reproduction`` - an empirical result of the paper that could have failed here. Counted in the headline.
    Its checks are judged a second time on its *nearest null* (``nulls: {aa: ..., placebo: ...}``, each a run
    named under the paper's ``controls:``, or ``{none: <why none can be built>}``):
      - the A/A null: the comparator in the method's place, with independent seeds (for a claim against a fixed
        number, the method's own seeds against each other); it asks what every A/B test asks first: does the
        same comparison stay clear of a pass when there is nothing to find? ("no worse than B" passes when A is B);
      - the placebo: the method with only the credited ingredient made inert (a shuffled or random version of
        it, or the comparator's version of that one ingredient), everything else kept.
    The evaluate step measures each null's values under the same metric names. A claim is *controlled* when both
    nulls are measured and its checks do not pass on them (they fail, or stay undecided on a measured interval);
    otherwise (a null passes, has no value, or is not declared) it is ``uncontrolled``, with the reason. A claim
    may also name a negative control (``control: <name>``: a run with the mechanism removed or broken), judged the
    same way and shown; one that does not fail also makes the claim uncontrolled. ``no_control: <reason>`` says why
    no negative control can exist (without nulls, the claim is uncontrolled).
  * ``sanity`` - a property that holds when the code is right (a count, an identity, a by-construction
    bound). Judged, shown as a check of the implementation, never counted as a reproduced result. It may name
    a control too: a deliberately faulty variant that the check must catch (e.g. a leaking protocol).
  * ``info`` - measured and shown, never judged.

Each check names a metric that evaluate measured once per unit (a seed, a data set, a cell of the paper's
table), a comparator, a threshold (per profile if needed) and an aggregate (mean, median or all). Verdict of
a check, with x the aggregate, n the number of units and [lo, hi] the 95 % t-interval of their mean:
  1. inconclusive if a value is missing or NaN, or n is below the units the claim (or check) asks for;
  2. ``all``: pass when every unit satisfies the comparator, else fail (one counterexample fails);
  3. the sign rule: with n >= 3 units all on one side of the threshold, each at least a clear margin away
     from it, that side decides (3 of 3 on one side happens by chance with p = 1/8 one-sided; the margin
     keeps float noise and grazing values from deciding). The margin is the check's ``margin`` if it states
     one, else 5 % of max(|threshold|, |median unit|), and never below 1e-9;
  4. otherwise the t-interval: inconclusive when it contains the threshold (claims.json then gives
     ``units_to_decide``, the units at which the same mean and spread would decide), else whether x satisfies
     the comparator (a zero-spread value is decided).
A claim passes when all its checks pass, fails when any fails, and is inconclusive otherwise.

Registry: each claim records the commit that registered it (``registered: {commit, date}``) and every later change
of its definition (metric, comparator, threshold, margin, units, kind, control, nulls, gate) as an amendment
(``amendments:``, with what changed, why, and the verdict before -> after); workflow/tools/registry.py checks the
list against the registered version, and the headline counts the passes that rest on an amendment made after
results.

Gates: a claim may state ``requires: [<id>, ...]``, claims written before it in the file whose pass is a
prerequisite of judging it (a spec's "the baseline must learn the task first"; typically a sanity claim). When a
required claim does not pass, the claim is inconclusive whatever its checks say, with the gate named in
``gated_by`` and its own verdict kept in ``ungated_verdict``: a comparison between models that did not learn is
never silently passed (or failed).

No silent misses: claims.yaml is validated (workflow/schemas/claims.schema.yaml plus the rules below) before
any job runs, and a metric that a check names but evaluate did not produce is an error naming the paper, the
claim and the metric, unless the claim (or check) declares ``skip: {<profile>: <reason>}``.
"""
from __future__ import annotations

import math
import operator
from functools import lru_cache
from pathlib import Path

import numpy as np

from .params import non_finite

OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
VERDICTS = ("pass", "fail", "inconclusive")
MIN_SIGN_UNITS = 3   # fewer units on one side happen by chance too often (p = 1/4 at n = 2)
SIGN_MARGIN = 0.05   # default clear margin, relative to max(|threshold|, |median unit|)
FLOAT_NOISE = 1e-9   # no margin is smaller than this: a verdict never hinges on float noise
SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "claims.schema.yaml"
# The profiles a per-profile value may name: the folders of profiles/ ("slurm" runs the default parameters).
PROFILES = sorted(p.name for p in (Path(__file__).resolve().parents[2] / "profiles").iterdir() if p.is_dir())


class ClaimsError(ValueError):
    """A problem with a claims.yaml or with what evaluate measured for it, worded for the user."""


# ---- claims.yaml: schema and cross-field rules ---------------------------------------------------------

@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    from .params import read_yaml

    return jsonschema.Draft202012Validator(read_yaml(SCHEMA))


def problems(spec: dict, where: str) -> list[str]:
    """Every problem of a parsed claims.yaml, one line each (empty when it is valid)."""
    def at(path: list) -> str:  # claims.3.checks.0.op -> "claims.3.checks.0.op (claim K2)"
        dotted = ".".join(map(str, path)) or "(top level)"
        claims = spec.get("claims") if isinstance(spec, dict) else None
        if len(path) > 1 and path[0] == "claims" and isinstance(claims, list) and isinstance(claims[path[1]], dict):
            dotted += f" (claim {claims[path[1]].get('id', '?')})"
        return dotted

    out = [f"{where}: {at(list(e.absolute_path))}: {e.message}"
           for e in sorted(_validator().iter_errors(spec), key=lambda e: list(e.absolute_path))]
    out += [f"{where}: {at([int(k) if k.isdigit() else k for k in key.split('.')])}: not a finite number (.nan and .inf never pass nor fail a comparison)"
            for key in non_finite(spec)]
    if out:
        return out
    out += [f"{where}: {at(path)}: '{name}' is not a profile (known: {', '.join(PROFILES)}); a value for a misspelt "
            "profile would be ignored and the default used" for path, name in per_profile_names(spec)
            if name not in PROFILES]
    controls = spec.get("controls", {})
    seen = set()
    for claim in spec["claims"]:
        cid = claim["id"]
        if cid in seen:
            out.append(f"{where}: claim id {cid} appears twice")
        seen.add(cid)
        for role, name in [("control", claim.get("control")), *claim.get("nulls", {}).items()]:
            if isinstance(name, str) and name not in controls:
                out.append(f"{where}: claim {cid} names {role} '{name}', which is not under `controls:` "
                           f"(declared: {', '.join(controls) or 'none'})")
        if "nulls" in claim and claim["kind"] != "reproduction":
            out.append(f"{where}: claim {cid} is of kind {claim['kind']}: only a reproduction claim has nulls")
        if claim["kind"] == "reproduction" and not ("control" in claim or "no_control" in claim):
            out.append(f"{where}: reproduction claim {cid} names no control: add `control: <name>` (a run with the "
                       "paper's mechanism removed or broken) or `no_control: <why none can exist>`")
        for gate in claim.get("requires", []):
            if gate not in seen or gate == cid:
                out.append(f"{where}: claim {cid} requires claim '{gate}', which is not a claim written before it "
                           "(a gate comes first in claims.yaml)")
        if claim["kind"] == "info" and ("control" in claim or "no_control" in claim):
            out.append(f"{where}: claim {cid} is of kind info: info claims are not judged, so they have no control")
    unused = set(controls) - {name for c in spec["claims"] for name in [c.get("control"), *c.get("nulls", {}).values()]
                              if isinstance(name, str)}
    out += [f"{where}: control '{name}' is declared but no claim uses it" for name in sorted(unused)]
    return out


def per_profile_names(spec: dict) -> list[tuple[list, str]]:
    """(path, profile name) of every per-profile value: a threshold, margin or units given as {profile: value}, and
    every `skip: {profile: why}`."""
    found = []
    for i, claim in enumerate(spec["claims"]):
        for j, chk in enumerate([claim, *claim["checks"]]):
            base = ["claims", i] + ([] if j == 0 else ["checks", j - 1])
            for key in ("threshold", "margin", "units", "skip"):
                if isinstance(chk.get(key), dict):
                    found += [(base + [key, name], name) for name in chk[key]]
    return found


def load(path) -> dict:
    """A validated claims.yaml; ClaimsError lists every problem."""
    from .params import read_yaml

    path = Path(path)
    spec = read_yaml(path)
    found = problems(spec, str(path))
    if found:
        raise ClaimsError("invalid claims file, nothing was run:\n  " + "\n  ".join(found))
    return spec


def validate_papers(slugs, papers_dir: Path = Path(__file__).resolve().parents[1] / "papers") -> None:
    """Check every paper's claims.yaml before any job runs; one ClaimsError lists all problems. Files that passed
    unchanged (with the same schema, rules and profiles) are not checked again: that took most of a second of every
    `snakemake` call."""
    from . import params as params_mod

    root = papers_dir.parents[1]
    paths = [papers_dir / slug / "claims.yaml" for slug in slugs]
    found = [f"{path}: missing (every paper has a claims.yaml, written before results)" for path in paths
             if not path.exists()]
    if found:
        raise ClaimsError("invalid claims files, nothing was run:\n  " + "\n  ".join(found))
    stamp = params_mod.passed_stamp("claims-valid", [SCHEMA, Path(__file__), Path(params_mod.__file__), *paths], root,
                                    extra=",".join(PROFILES))
    if stamp.exists():
        return
    found = [problem for path in paths for problem in problems(params_mod.read_yaml(path), str(path.relative_to(root)))]
    if found:
        raise ClaimsError("invalid claims files, nothing was run:\n  " + "\n  ".join(found))
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


# ---- verdicts ----------------------------------------------------------------------------------------------

def by_profile(value, profile: str, fallback=None):
    """A value that claims.yaml may give per profile ({default: x, smoke: y})."""
    if isinstance(value, dict):
        return value.get(profile, value.get("default", fallback))
    return fallback if value is None else value


def threshold_for(check: dict, profile: str) -> float:
    return float(by_profile(check["threshold"], profile))


def units_for(check: dict, claim: dict, profile: str) -> int:
    """How many units a check needs: its own `units` (a pooled count is one unit), else its claim's."""
    return int(by_profile(check.get("units", claim.get("units", 1)), profile, 1))


def t_interval(values: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    n = len(values)
    if n < 2:
        return (float(values[0]), float(values[0])) if n else (math.nan, math.nan)
    half = stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n)
    return float(values.mean() - half), float(values.mean() + half)


def units_to_decide(values: np.ndarray, thr: float, most: int = 1000) -> int | None:
    """Units at which the t-interval of the current mean and spread would exclude the threshold (None: > most)."""
    from scipy import stats

    gap, sd = abs(float(values.mean()) - thr), float(values.std(ddof=1))
    for n in range(len(values) + 1, most + 1):
        if stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) < gap:
            return n
    return None


def clear_margin(check: dict, values: np.ndarray, thr: float, profile: str) -> float:
    stated = by_profile(check.get("margin"), profile)
    if stated is not None:
        return max(float(stated), FLOAT_NOISE)
    return max(SIGN_MARGIN * max(abs(thr), abs(float(np.median(values)))), FLOAT_NOISE)


def sign_side(values: np.ndarray, op: str, thr: float, margin: float):
    """True (False) when every unit satisfies (violates) the comparator at least `margin` from the threshold."""
    if len(values) < MIN_SIGN_UNITS or not (np.abs(values - thr) >= margin).all():
        return None
    satisfied = [OPS[op](v, thr) for v in values]
    return True if all(satisfied) else False if not any(satisfied) else None


def check_verdict(check: dict, values, profile: str, min_units: int) -> dict:
    values = np.asarray(values, dtype=float).ravel()
    op, thr = check["op"], threshold_for(check, profile)
    agg = check.get("aggregate", "mean")
    out = {"metric": check["metric"], "op": op, "threshold": thr, "aggregate": agg, "n": int(len(values)),
           "values": values.tolist()}
    if len(values) == 0 or np.isnan(values).any():  # e.g. a comparison with nothing to compare in this run
        return out | {"value": None, "verdict": "inconclusive", "why": "no value measured, or NaN"}
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
        return out | {"verdict": "pass" if all(passing) else "fail", "rule": "all units"}
    side = sign_side(values, op, thr, clear_margin(check, values, thr, profile))
    if side is not None:
        return out | {"verdict": "pass" if side else "fail", "rule": "sign"}
    if len(values) >= 2 and lo < hi and lo <= thr <= hi:  # a zero-spread exact value is decided
        return out | {"verdict": "inconclusive", "why": "95% interval over units contains the threshold",
                      "units_to_decide": units_to_decide(values, thr)}
    return out | {"verdict": "pass" if OPS[op](value, thr) else "fail", "rule": "t-interval"}


def combine(verdicts: list[str]) -> str:
    if "fail" in verdicts:
        return "fail"
    return "pass" if verdicts and all(v == "pass" for v in verdicts) else "inconclusive"


def skip_reason(claim: dict, check: dict, profile: str) -> str | None:
    return {**claim.get("skip", {}), **check.get("skip", {})}.get(profile)


def judge(claim: dict, measured: dict, profile: str, missing: list[str], where: str) -> tuple[str, list[dict]]:
    """(verdict, check results) of one claim's checks on one set of measured values."""
    checks = []
    for chk in claim["checks"]:
        skipped = skip_reason(claim, chk, profile)
        if chk["metric"] not in measured and not skipped:
            missing.append(f"{where}: claim {claim['id']} checks metric '{chk['metric']}', which evaluate did not produce")
        if skipped:
            checks.append({"metric": chk["metric"], "op": chk["op"], "threshold": threshold_for(chk, profile),
                           "aggregate": chk.get("aggregate", "mean"), "n": 0, "values": [], "value": None,
                           "verdict": "inconclusive", "why": f"not measured in the {profile} profile: {skipped}"})
        else:
            checks.append(check_verdict(chk, measured.get(chk["metric"], []), profile, units_for(chk, claim, profile)))
    return combine([c["verdict"] for c in checks]), checks


def judged_control(name, claim: dict, spec: dict, controls: dict, profile: str, missing: list[str], where: str) -> dict:
    """One control run (a negative control or a null) judged by the claim's checks; {"none": why} stays as it is."""
    if not isinstance(name, str):
        return dict(name)
    if name not in controls:
        missing.append(f"{where}: claim {claim['id']} is judged against control '{name}', which evaluate did not measure")
        return {"name": name, "what": spec["controls"].get(name, ""), "verdict": "inconclusive", "checks": []}
    verdict, checks = judge(claim, controls[name], profile, missing, f"{where} (control {name})")
    return {"name": name, "what": spec["controls"][name], "verdict": verdict, "checks": checks}


NULL_NAMES = {"aa": "the A/A null (the comparator in the method's place)", "placebo": "the placebo"}


def unmeasured(judged: dict) -> str:
    """Why a judged null has no verdict of its own ('' when every check was measured): a check with no value, too
    few units, or one this profile skips. An interval that contains the threshold is a measurement: the checks did
    not pass on the null."""
    for chk in judged.get("checks", []):
        if chk["verdict"] == "inconclusive" and not chk.get("why", "").startswith("95% interval"):
            return chk.get("why", "no value")
    return "" if judged.get("checks") else "not measured"


def null_reason(role: str, null: dict) -> str:
    """Why one null leaves the claim uncontrolled ('' when it did its job: its checks did not pass on it).

    A null passes when the claim's checks cannot tell the method from its comparator (A/A) or from the method with
    the credited ingredient inert (placebo): the claim is uncontrolled. A null whose checks stay undecided on a
    measured interval did its job (an A/A difference of the comparator with itself has mean zero: "better than"
    can only stay undecided there); one not measured did not."""
    if "none" in null:
        return f"no {'placebo' if role == 'placebo' else 'A/A null'}: {null['none']}"
    if null["verdict"] == "pass":
        return f"{NULL_NAMES[role]} passes the same checks"
    if null["verdict"] == "inconclusive" and unmeasured(null):
        return f"{NULL_NAMES[role]} has no value here ({unmeasured(null)})"
    return ""


def control_of(claim: dict, spec: dict, controls: dict, profile: str, missing: list[str], where: str) -> dict:
    """The nulls' and the negative control's verdicts on the claim's checks, and whether the claim is uncontrolled:
    the reasons, one per null that passes or was not measured, or a negative control that did not fail."""
    out = {"nulls": {role: judged_control(name, claim, spec, controls, profile, missing, where)
                     for role, name in claim.get("nulls", {}).items()}}
    why = []
    if "no_control" in claim:
        out["control"] = {"none": claim["no_control"]}
        if not out["nulls"]:
            why.append(f"no control: {claim['no_control']}")
    elif "control" in claim:
        out["control"] = judged_control(claim["control"], claim, spec, controls, profile, missing, where)
    if claim["kind"] == "reproduction" and not out["nulls"]:
        why.append("no A/A null or placebo declared")
    elif claim["kind"] == "reproduction" and "placebo" not in out["nulls"]:
        why.append("no placebo declared")
    why += [reason for role, null in out["nulls"].items() if (reason := null_reason(role, null))]
    verdict = out.get("control", {}).get("verdict", "fail")
    if verdict != "fail":
        why.append("the control passes the same checks" if verdict == "pass" else "the control's verdict is inconclusive")
    return out | {"uncontrolled": bool(why), "uncontrolled_why": "; ".join(why)}


def counts_as_amended(amendment: dict) -> bool:
    """Whether an amendment may have helped a pass: one made after results, unless all it did was declare nulls
    (a null can only take a pass away)."""
    changed = amendment.get("changed", {})
    return amendment["after_results"] and not (changed and all(p.startswith("nulls.") for p in changed))


def evaluate(spec: dict, measured: dict, profile: str, controls: dict | None = None) -> dict:
    """spec: the parsed claims.yaml; measured: {metric: [value per unit]}; controls: {control: {metric: [...]}}.

    Returns the content of claims.json. Raises ClaimsError naming every metric a check needs that is missing.
    """
    controls = controls or {}
    where = f"paper {spec['paper']['slug']}"
    claims, missing, verdicts = [], [], {}
    for claim in spec["claims"]:
        verdict, checks = judge(claim, measured, profile, missing, where)
        row = {k: claim.get(k) for k in ("id", "kind", "statement", "paper_value", "source", "why", "registered")}
        row["amendments"] = claim.get("amendments", [])
        row["amended_after_results"] = any(counts_as_amended(a) for a in row["amendments"])
        closed = {gate: verdicts[gate] for gate in claim.get("requires", []) if verdicts.get(gate) != "pass"}
        if closed and claim["kind"] != "info":
            row |= {"gated_by": closed, "ungated_verdict": verdict}
            verdict = "inconclusive"
        verdicts[claim["id"]] = verdict
        row |= {"verdict": "info" if claim["kind"] == "info" else verdict, "checks": checks,
                "measured": checks[0].get("value")}
        if claim["kind"] == "reproduction" or "control" in claim:  # a sanity check may show it catches a fault
            row |= control_of(claim, spec, controls, profile, missing, where)
        claims.append(row)
    if missing:
        raise ClaimsError("claims could not be judged:\n  " + "\n  ".join(missing) + "\n(fix the metric name in "
                          "claims.yaml, measure it in the paper's evaluate step, or declare `skip: {<profile>: <why>}`)")
    return {"paper": spec["paper"]["slug"], "profile": profile, "claims": claims, "summary": summarise(claims)}


HEADLINE = ("pass_controlled", "pass_uncontrolled", "fail", "inconclusive", "gated")


def headline_column(claim: dict) -> str:
    """Where a reproduction claim counts in the headline: a pass whose nulls both failed is the only reproduced
    result that could have failed; a pass they do not control is counted apart, and so is a claim a closed gate
    left undecided (an inconclusive that says nothing of the claim's checks)."""
    if claim["verdict"] == "pass":
        return "pass_uncontrolled" if claim.get("uncontrolled") else "pass_controlled"
    if claim["verdict"] == "inconclusive" and claim.get("gated_by"):
        return "gated"
    return claim["verdict"]


def summarise(claims: list[dict]) -> dict:
    """Reproduction and sanity verdict counts apart; the headline's five columns of reproduction claims; uncontrolled
    reproduction claims; passes resting on an amendment made after results; info claims."""
    def counts(kind):
        return {v: sum(c["kind"] == kind and c["verdict"] == v for c in claims) for v in VERDICTS}

    repro = [c for c in claims if c["kind"] == "reproduction"]
    return {"reproduction": counts("reproduction"), "sanity": counts("sanity"),
            "headline": {col: sum(headline_column(c) == col for c in repro) for col in HEADLINE},
            "uncontrolled": sum(bool(c.get("uncontrolled")) for c in repro),
            "passes_on_amendment": sum(c["verdict"] == "pass" and bool(c.get("amended_after_results")) for c in repro),
            "info": sum(c["kind"] == "info" for c in claims)}


def check(claims_yaml, measured: dict, profile: str, out, log=print, controls: dict | None = None) -> dict:
    """Judge a paper's claims.yaml on its measured values (and its controls'), write claims.json, log each claim."""
    from .io import write_json

    result = evaluate(load(claims_yaml), measured, profile, controls)
    write_json(out, result)
    for c in result["claims"]:
        control = c.get("control", {})
        shown = f"; control {control['name']}: {control['verdict']}" if "verdict" in control else ""
        flag = {"reproduction": " [uncontrolled]", "sanity": " [the faulty variant was not caught]"}
        gated = "".join(f"; gate {g} did not pass ({v}), would be {c['ungated_verdict']}"
                        for g, v in c.get("gated_by", {}).items())
        log(f"claim {c['id']} ({c['kind']}): {c['verdict']} (first check: {c['measured']}){shown}{gated}"
            + (flag[c["kind"]] if c.get("uncontrolled") else ""))
    return result


def as_metrics(result: dict) -> dict:
    """MLflow metrics of a claims.json: each claim's first value, pass (1/0) and, for reproduction claims,
    whether its control failed (1/0: the claim could have failed); plus the headline counts."""
    metrics = {}
    for c in result["claims"]:
        metrics[f"{c['id']}_measured"] = c["measured"]
        if c["verdict"] != "info":
            metrics[f"claim_{c['id']}_pass"] = float(c["verdict"] == "pass")
        if "uncontrolled" in c:
            metrics[f"claim_{c['id']}_controlled"] = float(not c["uncontrolled"])
    s = result["summary"]
    return metrics | {f"{kind}_{v}": s[kind][v] for kind in ("reproduction", "sanity") for v in VERDICTS} | {
        f"headline_{col}": s["headline"][col] for col in HEADLINE} | {
        "uncontrolled": s["uncontrolled"], "passes_on_amendment": s["passes_on_amendment"], "info": s["info"]}


def stand_in(table, column: str, replace: dict[str, str], seed: str | None = None, keys=()):
    """A control or null in its method's place: the (pandas) table with the rows whose `column` names a method of
    `replace` taken from the rows of its stand-in instead (relabelled); the stand-in keeps its own rows too and the
    rest is untouched. The evaluate step then measures the stand-in with the method's code and metric names.

    With `seed` (a column) and `keys` (the other columns that name a unit: data set, horizon, ...), the stand-in's
    rows come from *another* seed of the same unit: the next one, cyclically. That is the A/A null: the comparator
    in the method's place with independent seeds, so that the comparison meets the comparator's own seed-to-seed
    noise and nothing else (with the same seeds it would be exactly zero, which no check should be judged on). A
    unit with one seed has no independent partner and gives no value."""
    import pandas as pd

    kept = table[~table[column].isin(list(replace))]
    swapped = [table[table[column] == source] for source in replace.values()]
    if seed:
        swapped = [next_seed(rows, seed, list(keys)) for rows in swapped]
    swapped = [rows.assign(**{column: method}) for rows, method in zip(swapped, replace)]
    return pd.concat([kept, *swapped], ignore_index=True)


def without_values(measured: dict, names) -> dict[str, dict[str, list[float]]]:
    """Nulls that cannot be measured (a run with one seed: no independent partner): every metric of `measured` as
    NaN for each null in `names`, so that the claims are judged on them and say they have no value."""
    return {name: {k: [math.nan] * len(v) for k, v in measured.items()} for name in names}


def next_seed(rows, seed: str, keys: list[str]):
    """`rows` with each one's seed moved to the next seed among the rows of its unit (same `keys`), cyclically;
    units with a single seed dropped."""
    import pandas as pd

    out = []
    for _, unit in (rows.groupby(keys, dropna=False, sort=False) if keys else [(None, rows)]):
        seeds = sorted(unit[seed].unique())
        if len(seeds) > 1:
            out.append(unit.assign(**{seed: unit[seed].map(dict(zip(seeds, seeds[1:] + seeds[:1])))}))
    return pd.concat(out) if out else rows.iloc[:0]
