"""The vision encoder of one seed, pretrained once on the renderer's own labels and shared, frozen, by every regime
and control of that seed (the paper's models start from a pretrained InternVL2.5, whose vision encoder knows objects
before any spatial QA). Targets per cell of the 6 x 6 grid (methods.cell_targets): whether an object covers it, and
that object's colour, shape, position in the view's canonical space, height and log volume; never its facing
direction, the rotation category's answer. Trained on the training scenes' images (both views); its read-out is
probed on the validation scenes' images: the legibility measure (colour, shape, objectness, depth)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, save_state
from workflow.core.step import Step, seed_everything

from . import methods as M
from . import qa

READS = ("internspatial.encoder",)


def split_images(record: dict, split: str) -> list[int]:
    """The image indices of a split's scenes (qa.VIEWS images per scene), from the scene range the data step wrote."""
    first, count = record["splits"][split]
    return list(range(qa.VIEWS * first, qa.VIEWS * (first + count)))


def main(argv=None):
    step = Step("internspatial", "encoder", __doc__)
    step.parser.add_argument("--images", type=Path, required=True)
    step.parser.add_argument("--qa", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    arrays = read_npz(args.images)
    record = json.loads(args.qa.read_text())
    train, val = split_images(record, "train"), split_images(record, "val")
    encoder = M.Encoder(p["width"], p["depth"])
    M.pretrain(encoder, arrays["images"], arrays["ids"], record["scenes"], train, p, np.random.default_rng(args.seed),
               step.curve)
    legibility = M.probe(encoder, arrays["images"], arrays["ids"], record["scenes"], val)
    step.log("validation read-out: " + ", ".join(f"{k} {v:.3f}" for k, v in legibility.items()))
    save_state(args.out, encoder.state_dict(), {"width": p["width"], "depth": p["depth"], "seed": args.seed})
    step.finish(metrics={f"val_{k}": v for k, v in legibility.items()}, outputs=[args.out])


if __name__ == "__main__":
    main()
