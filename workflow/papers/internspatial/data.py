"""The data engine: train, validation and test scenes, two views of each (the second further around the room by a random
multiple of 45 degrees), rendered with their instance ids, and the QA items of every kind (balanced yes/no), drawn
down to the profile's counts (spec 6.6: spatial and general QA for training; ISB-mini, VSI-mini and general items
for testing; the validation split, drawn like the test split, is what pilots are judged on). Formats are applied when
an item is read (methods.encode), from the stored ids and annotations. Each view's annotations keep every object's
position in that view's canonical space and each scene its objects' heights and log volumes: with the masks, the
renderer's labels the vision encoder is pretrained on (methods.cell_targets)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workflow.core.io import write_npz, write_text
from workflow.core.step import Step

from . import qa
from . import world as W

READS = ("internspatial.data",)


def build(n_scenes: int, rng: np.random.Generator, offset: int = 0, sizes=(0.3, 1.2), radii=(4.0, 7.0)):
    """(images, ids, scene records, items) of n_scenes scenes; scene indices start at `offset`; objects `sizes` m
    across, cameras `radii` m from the room's centre."""
    images, ids, scenes, items = [], [], [], []
    for s in range(offset, offset + n_scenes):
        scene = W.random_scene(rng, sizes=tuple(sizes))
        turn = int(rng.choice(np.arange(45, 360, 45)))
        first = W.random_camera(scene, rng, radii=tuple(radii))
        phi = float(np.arctan2(first.pos[1] - scene.room[1] / 2, first.pos[0] - scene.room[0] / 2))
        second = W.random_camera(scene, rng, yaw_around=phi + np.deg2rad(turn), radii=tuple(radii))
        anns = []
        for cam in (first, second):  # qa.VIEWS images per scene, read back by qa.image_index
            img, inst = W.render(scene, cam)
            images.append(img)
            ids.append(inst)
            ann = W.annotate(scene, inst)
            for a, xyz in zip(ann, qa.canonical(scene, cam).tolist()):
                a["xyz"] = [round(v, 3) for v in xyz]
            anns.append(ann)
        sizes_of = [[round(o.scale[2], 3), round(float(np.log(o.volume)), 3)] for o in scene.objects]
        scenes.append({"names": [o.name for o in scene.objects], "anns": anns, "turn": turn, "sizes": sizes_of})
        items += qa.isb_items(s, scene, first, anns[0], rng) + qa.vsi_items(s, scene, [first, second], anns, turn, rng)
        items += qa.general_items(s, scene, anns[0], rng)
    return images, ids, scenes, items


def group(it: dict, split: str) -> str:
    """The count an item falls under: training counts spatial (ISB and VSI kinds) and general QA; validation and
    testing count ISB-mini, VSI-mini and general items apart."""
    return "spatial" if split == "train" and it["kind"] != "general" else it["kind"]


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
    held_out = {"isb": p["test_isb"], "vsi": p["test_vsi"], "general": p["test_general"]}
    limits = {"train": {"spatial": p["train_spatial"], "general": p["train_general"]},
              "val": held_out | {"isb": p["val_isb"]}, "test": held_out}
    images, ids, scenes, items, splits = [], [], [], {}, {}
    for split in ("train", "val", "test"):
        splits[split] = [len(scenes), p[f"{split}_scenes"]]  # (first scene, count): the encoder step's images
        im, inst, sc, it = build(p[f"{split}_scenes"], rng, offset=len(scenes), sizes=p["object_size"],
                                 radii=p["camera_radius"])
        images += im
        ids += inst
        scenes += sc
        items[split] = draw(qa.balance(it, rng), limits[split], split, rng)
    write_npz(args.images, images=np.stack(images), ids=np.stack(ids))
    write_text(args.qa, json.dumps({"scenes": scenes, "items": items, "splits": splits}))
    counts = {f"{split}_{kind}": sum(i["kind"] == kind for i in its) for split, its in items.items()
              for kind in ("isb", "vsi", "general")}
    step.finish(metrics=counts, outputs=[args.images, args.qa])


if __name__ == "__main__":
    main()
