"""Every agent's episodes of every seed and the simulator self-tests: the success table (agents x 12 categories),
the agents' costs, each claim's metric per seed for the method and for its negative controls, and claims.yaml."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import episodes as E
from . import plan

READS = ("simuhome.plan",)

CLAIMS = Path(__file__).with_name("claims.yaml")
QT4_FEASIBLE = [f"{qt}_feasible" for qt in ("qt4_1", "qt4_2", "qt4_3")]
INFEASIBLE = [c for c in E.CATEGORIES if c.endswith("_infeasible")]


def measure(runs: pd.DataFrame, fidelity: list[dict], simulator: str = "method") -> dict[str, list[float]]:
    """{metric: [value per seed]} (seeds in order) from the runs table and the self-tests."""
    out: dict[str, list[float]] = {}

    def add(key, v):
        out.setdefault(key, []).append(float(v))

    for seed, g in runs.groupby("seed", sort=True):
        rate = g.pivot_table(index="agent", columns="category", values="success", aggfunc="mean")
        add("k3_planner_min_category", rate.loc["planner", E.CATEGORIES].min())
        add("k3_random_overall", g[g.agent.eq("random")].success.mean())
        add("k4_reactive_qt4_feasible_max", rate.loc["reactive", QT4_FEASIBLE].max())
        add("k4_reactive_qt3_feasible", rate.loc["reactive", "qt3_feasible"])
        add("k4_verifying_minus_reactive_infeasible",
            rate.loc["verifying", INFEASIBLE].mean() - rate.loc["reactive", INFEASIBLE].mean())
        noisy = g[g.agent.eq("planner_noisy")]
        add("k5_qt3_minus_qt4", rate.loc["planner_noisy", "qt3_feasible"] - rate.loc["planner_noisy", QT4_FEASIBLE].mean())
        won = noisy[noisy.category.eq("qt3_feasible") & noisy.success]
        add("k5_recovered_share", won.recovered_error.mean() if len(won) else np.nan)
        add("info_k5_qt3_feasible", rate.loc["planner_noisy", "qt3_feasible"])
        add("info_k5_qt4_feasible_mean", rate.loc["planner_noisy", QT4_FEASIBLE].mean())
        add("info_k6_planner_minus_verifying_min", (rate.loc["planner"] - rate.loc["verifying"]).min())
        qt4 = g[g.category.str.startswith("qt4")].groupby("agent").steps.mean()
        add("info_k6_calls_ratio_qt4", qt4["planner"] / qt4["verifying"])
        for agent in plan.AGENTS:
            add(f"info_success_{agent}", g[g.agent.eq(agent)].success.mean())
    for f in sorted(fidelity, key=lambda f: f["seed"]):
        for key, v in f[simulator].items():
            add(key, v)
    return out


def control_measures(runs: pd.DataFrame, fidelity: list[dict]) -> dict[str, dict]:
    """claims.yaml `controls:`, each measured with the method's code and metric names."""
    return {"vacuous_judge": measure(runs.assign(success=True), fidelity),
            "any_time_judge": measure(runs.assign(success=runs.success_any_time), fidelity),
            "checked_scheduler": measure(claims_mod.stand_in(runs, "agent", {"planner_noisy": "planner_noisy_checked"}),
                                         fidelity),
            "coarse_euler": measure(runs, fidelity, "coarse_euler")}


def success_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The paper's main table: success per agent and category (mean over seeds, and the seeds' spread)."""
    per_seed = runs.groupby(["agent", "category", "seed"], as_index=False).success.mean()
    return per_seed.groupby(["agent", "category"], as_index=False).agg(success=("success", "mean"),
                                                                        success_sd=("success", "std"))


def agent_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per agent and query type: success, mean tool calls, virtual and wall time per episode, errors, recoveries."""
    return runs.assign(query_type=runs.category.str.rsplit("_", n=1).str[0]).groupby(
        ["agent", "query_type"], as_index=False).agg(
        success=("success", "mean"), steps=("steps", "mean"), virtual_s=("virtual_s", "mean"),
        wall_ms=("wall_s", lambda w: 1000 * w.mean()), errors=("errors", "mean"), recovered=("recovered_error", "mean"))


def read_runs(p: dict) -> pd.DataFrame:
    return pd.concat([pd.read_csv(plan.runs_path(a, s)).assign(agent=a, seed=s) for a in plan.AGENTS for s in p["seeds"]],
                     ignore_index=True)


def main(argv=None):
    step = Step("simuhome", "evaluate", __doc__)
    step.parser.add_argument("--table", type=Path, required=True)
    step.parser.add_argument("--agents", type=Path, required=True)
    step.parser.add_argument("--claims", type=Path, required=True)
    args, p = step.start(argv)
    runs = read_runs(p)
    fidelity = [read_json(path) for path in plan.all_fidelity(p)]
    measured = measure(runs, fidelity)
    result = claims_mod.check(CLAIMS, measured, args.profile, args.claims, step.log,
                              controls=control_measures(runs, fidelity))
    write_text(args.table, success_table(runs).to_csv(index=False, float_format="%.6g"))
    write_text(args.agents, agent_table(runs).to_csv(index=False, float_format="%.6g"))
    outputs = [args.table, args.agents, args.claims]
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=outputs, outputs=outputs)


if __name__ == "__main__":
    main()
