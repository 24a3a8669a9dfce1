"""The benchmark's episodes of one seed: every category, each episode validated against episode.schema.json."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from workflow.core.io import write_json
from workflow.core.step import Step

from . import episodes as E

READS = ("simuhome.episodes",)


def main(argv=None):
    step = Step("simuhome", "generate", __doc__)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    episodes = E.generate(p["per_category"], args.seed)
    write_json(args.out, episodes)
    devices = [len(r["devices"]) for ep in episodes for r in ep["initial_home_config"]["rooms"].values()]
    step.finish(metrics={"episodes": len(episodes), "devices_per_room": sum(devices) / len(devices),
                         **{f"episodes_{c}": n for c, n in Counter(ep["meta"]["category"] for ep in episodes).items()}},
                outputs=[args.out])


if __name__ == "__main__":
    main()
