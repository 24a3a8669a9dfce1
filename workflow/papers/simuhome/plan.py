"""The jobs of this paper, as pure functions of its params (params.yaml: simuhome).

Per seed: one set of episodes (50 per category: the paper's 600), one simulator self-test (claims K1 and K2), and
one job per agent configuration that runs it on every episode of that seed. Then the claims, the table, figures.

Agent configurations (name -> agent, slip probability, scheduler):
  random, reactive, verifying, planner      the skill ladder, no slips
  planner_noisy                             the planner with slips (K5: delayed feedback)
  planner_noisy_checked                     the same with a scheduler that checks actions when they are registered:
                                            the negative control of K5 (immediate feedback restored)
"""
from __future__ import annotations

OUT = "results/simuhome"
FIGURES = ("table_success", "fig_dynamics", "fig_tradeoff")


def agent_configs(agents: dict) -> dict[str, tuple[str, float, bool]]:
    eps = agents["noise"]
    return {"random": ("random", 0.0, False), "reactive": ("reactive", 0.0, False),
            "verifying": ("verifying", 0.0, False), "planner": ("planner", 0.0, False),
            "planner_noisy": ("planner", eps, False), "planner_noisy_checked": ("planner", eps, True)}


AGENTS = tuple(agent_configs({"noise": 0.0}))


def episodes_path(seed) -> str:
    return f"{OUT}/episodes/s{seed}.json"


def fidelity_path(seed) -> str:
    return f"{OUT}/fidelity/s{seed}.json"


def trace_path(seed) -> str:
    return f"{OUT}/fidelity/s{seed}_trace.csv"


def runs_path(agent: str, seed) -> str:
    return f"{OUT}/runs/{agent}/s{seed}.csv"


def trajectories_path(agent: str, seed) -> str:
    return f"{OUT}/runs/{agent}/s{seed}.jsonl"


def all_runs(plan: dict) -> list[str]:
    return [runs_path(a, s) for a in AGENTS for s in plan["seeds"]]


def all_fidelity(plan: dict) -> list[str]:
    return [fidelity_path(s) for s in plan["seeds"]]


def check(p: dict) -> None:
    """What the schema cannot say."""
    from workflow.core.params import ParamsError

    f = p["fidelity"]
    if f["cool_minutes"] * 60 > f["hours"] * 3600:
        raise ParamsError(f"simuhome.fidelity: cool_minutes {f['cool_minutes']} exceeds the {f['hours']} h run. "
                          "Fix: lower cool_minutes or raise hours.")


def out_path(name: str) -> str:
    """A file of this paper by its place under the paper's results folder (the rule file asks here for every path
    it does not build from a job's values above: tables, claims, per-wildcard outputs; the figures: figure_paths)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
