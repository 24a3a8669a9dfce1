"""Benchmark: simuhome's simulator speed (exact batch advance against tick-by-tick stepping) and the benchmark
evaluation's throughput (prints figures; not a test).

    python bench/simuhome_speed.py [--hours 2] [--per-category 50] [--seed 0] [--repeats 3]

(a) The self-test's K2 scenario (selftest.busy_config and busy_home, seed `seed`): one room with 6 devices acting on
it (two ACs cooling, a fan, a dehumidifier, an air purifier, a humidifier), a running dishwasher, an idle washer and
3 scheduled workflows (start the washer, turn an AC's fan down, switch the fan off), advanced `hours` of virtual
time in one call. Simulated hours per wall-clock second with the exact batch advance (`Home(exact_batch=True)`, the
default: closed-form jumps between events) and with tick-by-tick stepping (`exact_batch=False`, one 0.1-s tick at
a time), their ratio, and the largest absolute difference of the final room variables (temperature in centi-degC,
humidity in centi-%RH, PM10 in ug/m3), with whether both runs logged the same discrete changes. Medians of
`repeats` runs for tick-by-tick stepping and of 15 x `repeats` for the batch advance (it takes about a millisecond).
(b) The benchmark's 12 x `per-category` episodes of seed `seed` (episodes.generate; 600 by default), not counting
their generation: episodes per second of the whole evaluation (agents.run_episode with the PlannerAgent: the agent's
tool calls on the simulator, then the judge, which run_episode calls twice), and of the judge alone (one clocked
judge call per episode on the home as the planner left it, rebuilt by replaying its trajectory; the copies the judge
advances are made outside the timed region). Medians of `repeats` passes.
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKFLOWS = 3
ACTIVE_DEVICES = 6
BATCH_REPEATS = 15  # x --repeats: the batch advance is too quick for 3 runs to give a stable median


def advance_once(cfg: dict, seed: int, seconds: float, exact_batch: bool):
    """(wall seconds, home) of one advance of a fresh busy home."""
    import numpy as np

    from workflow.papers.simuhome import selftest

    home = selftest.busy_home(cfg, WORKFLOWS, np.random.default_rng(seed), exact_batch=exact_batch)
    started = time.perf_counter()
    home.advance(seconds)
    return time.perf_counter() - started, home


def simulator(hours: float, seed: int, repeats: int) -> None:
    import numpy as np

    from workflow.papers.simuhome import selftest, sim

    env = selftest.scenario_env(np.random.default_rng(seed))
    cfg = selftest.busy_config(env, ACTIVE_DEVICES)
    seconds = hours * 3600
    batch = [advance_once(cfg, seed, seconds, True) for _ in range(BATCH_REPEATS * repeats)]
    ticks = [advance_once(cfg, seed, seconds, False) for _ in range(repeats)]
    fast, slow = statistics.median(w for w, _ in batch), statistics.median(w for w, _ in ticks)
    a, b = batch[-1][1], ticks[-1][1]
    diff = max(abs(a.rooms["room"].env[v] - b.rooms["room"].env[v]) for v in sim.VARIABLES)
    workflows = sum(w["state"] == "executed" for w in a.workflows.values())
    print(f"(a) {hours:g} h virtual ({seconds * sim.TICKS_PER_SECOND:,.0f} ticks), {ACTIVE_DEVICES} active devices, a "
          f"running dishwasher, {WORKFLOWS} workflows ({workflows} executed), seed {seed}")
    print(f"{'advance':<14} {'median wall s':>14} {'sim h / wall s':>15} {'x real time':>12} {'runs':>5}")
    for name, wall, runs in (("exact batch", fast, len(batch)), ("tick-by-tick", slow, len(ticks))):
        print(f"{name:<14} {wall:>14.6f} {hours / wall:>15,.1f} {seconds / wall:>12,.0f} {runs:>5}")
    print(f"batch / tick-by-tick speed: {slow / fast:,.0f}x; max |final room variable difference|: {diff:.3g}; "
          f"same discrete changes: {a.changes == b.changes}")


def replayed_end(ep: dict, steps: list[dict]):
    """The home as run_episode left it when the agent finished: its loop replayed (every call, then STEP_SECONDS
    after each call but the finish). The simulator is deterministic, so this is the home the judge saw."""
    from workflow.papers.simuhome import agents as A
    from workflow.papers.simuhome import sim

    home = sim.Home.from_config(ep["initial_home_config"])
    for s in steps:
        home.call(s["action"], s["action_input"])
        if s["action"] != "finish":
            home.advance(A.STEP_SECONDS)
    return home


def evaluation(per_category: int, seed: int, repeats: int) -> None:
    from workflow.papers.simuhome import agents as A
    from workflow.papers.simuhome import episodes as E
    from workflow.papers.simuhome import sim

    episodes = E.generate(per_category, seed)
    walls, results = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        results = [A.run_episode(ep, A.PlannerAgent()) for ep in episodes]
        walls.append(time.perf_counter() - started)
    rows = [r for r, _ in results]
    # the judge alone, on the homes the planner left (rebuilt once; a fresh copy per timed call: the judge advances it)
    ends = [(ep, replayed_end(ep, steps), sim.Home.from_config(ep["initial_home_config"]), row["answer"])
            for ep, (row, steps) in zip(episodes, results)]
    judge_walls, verdicts = [], None
    for _ in range(repeats):
        copies = [copy.deepcopy(home) for _, home, _, _ in ends]
        started = time.perf_counter()
        verdicts = [E.judge(ep, c, answer, initial) for (ep, _, initial, answer), c in zip(ends, copies)]
        judge_walls.append(time.perf_counter() - started)
    agree = verdicts == [r["success"] for r in rows]
    n, whole, judge = len(episodes), statistics.median(walls), statistics.median(judge_walls)
    print(f"(b) {n} episodes (episodes.generate({per_category}, {seed})), PlannerAgent: {sum(r['success'] for r in rows)}"
          f"/{n} succeed, {statistics.mean(r['steps'] for r in rows):.1f} steps per episode")
    print(f"{'what':<38} {'median wall s':>14} {'episodes / s':>13} {'runs':>5}")
    print(f"{'run_episode (planner + judge x2)':<38} {whole:>14.3f} {n / whole:>13,.0f} {len(walls):>5}")
    print(f"{'judge alone (1 clocked call)':<38} {judge:>14.3f} {n / judge:>13,.0f} {len(judge_walls):>5}")
    print(f"judge alone on the replayed homes agrees with run_episode's verdicts: {agree}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--per-category", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    simulator(args.hours, args.seed, args.repeats)
    print()
    evaluation(args.per_category, args.seed, args.repeats)


if __name__ == "__main__":
    main()
