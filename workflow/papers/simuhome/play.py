"""One agent configuration on every episode of one seed: a row per episode (success, steps, virtual and wall time,
errors, recovered errors) and the trajectories (thought, action, input, observation per step) as JSON lines."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from workflow.core.io import read_json, write_text
from workflow.core.step import Step

from . import agents as A
from . import plan

READS = ("simuhome.agents",)


def play(episodes: list[dict], config: tuple[str, float, bool], max_steps: int, seed: int) -> tuple[pd.DataFrame, list]:
    kind, eps, checked = config
    agent = A.make_agent(kind, eps)
    rows, trajectories = [], []
    for ep in episodes:
        row, steps = A.run_episode(ep, agent, max_steps=max_steps, seed=seed, validate_on_schedule=checked)
        rows.append(row)
        trajectories.append({"episode": ep["meta"]["id"], "query": ep["query"], "steps": steps})
    return pd.DataFrame(rows), trajectories


def main(argv=None):
    step = Step("simuhome", "play", __doc__)
    step.parser.add_argument("--episodes", type=Path, required=True)
    step.parser.add_argument("--agent", choices=plan.AGENTS, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    step.parser.add_argument("--trajectories", type=Path, required=True)
    args, p = step.start(argv)
    rows, trajectories = play(read_json(args.episodes), plan.agent_configs(p)[args.agent], p["max_steps"], args.seed)
    write_text(args.out, rows.to_csv(index=False))
    write_text(args.trajectories, "".join(json.dumps(t, default=str) + "\n" for t in trajectories))
    by_category = rows.groupby("category").success.mean()
    step.finish(metrics={"success": float(rows.success.mean()), "mean_steps": float(rows.steps.mean()),
                         **{f"success_{c}": float(v) for c, v in by_category.items()}},
                outputs=[args.out, args.trajectories])


if __name__ == "__main__":
    main()
