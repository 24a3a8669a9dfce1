"""The data engine: train and test scenes, two views of each (the second further around the room by a random
multiple of 45 degrees), rendered with their instance ids, and the QA items of every kind (balanced yes/no), drawn
down to the profile's counts (spec 6.6: spatial and general QA for training; ISB-mini, VSI-mini and general items
for testing). Formats are applied when an item is read (methods.encode), from the stored ids and annotations."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workflow.core.io import write_npz, write_text
from workflow.core.step import Step

from . import qa
from . import world as W

READS = ("internspatial.data",)


def build(n_scenes: int, rng: np.random.Generator, offset: int = 0):
    """(images, ids, scene records, items) of n_scenes scenes; scene indices start at `offset`."""
    images, ids, scenes, items = [], [], [], []
    for s in range(offset, offset + n_scenes):
        scene = W.random_scene(rng)
        turn = int(rng.choice(np.arange(45, 360, 45)))
        first = W.random_camera(scene, rng)
        phi = float(np.arctan2(first.pos[1] - scene.room[1] / 2, first.pos[0] - scene.room[0] / 2))
        second = W.random_camera(scene, rng, yaw_around=phi + np.deg2rad(turn))
        anns = []
        for cam in (first, second):  # qa.VIEWS images per scene, read back by qa.image_index
            img, inst = W.render(scene, cam)
            images.append(img)
            ids.append(inst)
            anns.append(W.annotate(scene, inst))
        scenes.append({"names": [o.name for o in scene.objects], "anns": anns, "turn": turn})
        items += qa.isb_items(s, scene, first, anns[0], rng) + qa.vsi_items(s, scene, [first, second], anns, turn, rng)
        items += qa.general_items(s, scene, anns[0], rng)
    return images, ids, scenes, items


def group(it: dict, split: str) -> str:
    """The count an item falls under: training counts spatial (ISB and VSI kinds) and general QA; testing counts
    ISB-mini, VSI-mini and general items apart."""
    return it["kind"] if split == "test" or it["kind"] == "general" else "spatial"


def draw(items: list[dict], limits: dict[str, int], split: str, rng: np.random.Generator) -> list[dict]:
    """At most limits[g] items of each group g, at random, in their original order."""
    out = []
    for g, limit in limits.items():
        members = [it for it in items if group(it, split) == g]
        out += [members[i] for i in sorted(rng.permutation(len(members))[:limit])]
    return out


def main(argv=None):
    step = Step("internspatial", "data", __doc__)
    step.parser.add_argument("--images", type=Path, required=True)
    step.parser.add_argument("--qa", type=Path, required=True)
    args, p = step.start(argv)
    rng = np.random.default_rng(p["seed"])
    limits = {"train": {"spatial": p["train_spatial"], "general": p["train_general"]},
              "test": {"isb": p["test_isb"], "vsi": p["test_vsi"], "general": p["test_general"]}}
    images, ids, scenes, items = [], [], [], {}
    for split in ("train", "test"):
        im, inst, sc, it = build(p[f"{split}_scenes"], rng, offset=len(scenes))
        images += im
        ids += inst
        scenes += sc
        items[split] = draw(qa.balance(it, rng), limits[split], split, rng)
    write_npz(args.images, images=np.stack(images), ids=np.stack(ids))
    write_text(args.qa, json.dumps({"scenes": scenes, "items": items}))
    counts = {f"{split}_{kind}": sum(i["kind"] == kind for i in its) for split, its in items.items()
              for kind in ("isb", "vsi", "general")}
    step.finish(metrics=counts, outputs=[args.images, args.qa])


if __name__ == "__main__":
    main()
