"""The QA engine (spec 6.3): questions from templates, answers from the scenes' exact geometry in canonical view
space, and the 19 instruction formats.

Items refer to objects through placeholders {A}, {B}, {C}; a format decides how each referred object is named in
the text and marked in the image:
  text:   nl "the red cube" | ref "<ref> red cube </ref>" | refbox "<ref> region </ref> <box> x1 y1 x2 y2 </box>"
          | capbox "the red cube <box> ... </box>" | mark "object mark1" (the k-th referred object's mark)
  visual: raw | boxes (each referred object's box drawn in its mark colour) | masks (its mask tinted) | ids (a
          mark-coloured tag in its box's corner)
mark text with the raw image names nothing: 5 x 4 - 1 = 19 formats (the spec's reading of the paper's list).

Categories. InternSpatial-Bench-mini, single view: position (left/right, in front/behind), size (bigger, taller),
existence (is there an object left of / behind {A}), counting (objects in view; objects left of {A}), rotation
(which way {A} faces, 8 directions relative to the camera). VSI-mini, two views: rotation angle between the
views (the camera moved around the room by 45-315 degrees), count of objects in the room across both views,
relative distance (which of {A}, {B} is closer to {C}). General (attribute) QA: the colour of the <shape>, the
shape of the <colour> object. Answers are balanced per template where they are yes/no (the spec's risk (ii)).
"""
from __future__ import annotations

import itertools

import numpy as np

from . import world as W

TEXTS = ("nl", "ref", "refbox", "capbox", "mark")
VISUALS = ("raw", "boxes", "masks", "ids")
FORMATS = tuple(f"{t}+{v}" for t in TEXTS for v in VISUALS if not (t == "mark" and v == "raw"))
MARK_COLOURS = ((255, 0, 255), (0, 255, 0), (255, 255, 255))
DIRECTIONS = ("away", "away_right", "right", "toward_right", "toward", "toward_left", "left", "away_left")
ISB = ("position", "size", "existence", "counting", "rotation")
VSI = ("rotation_angle", "count_room", "rel_distance")
GENERAL = ("attribute",)
MARGIN = 0.25  # m: a relation is asked only when it holds by this much (no ambiguous items)
VIEWS = 2  # views the data step renders per scene, stored scene after scene
COUNTS = tuple(f"c{i}" for i in range(10))
ANGLES = tuple(f"deg{d}" for d in range(45, 360, 45))
ANSWERS = ("yes", "no", "first", "second") + tuple(W.COLOURS) + W.SHAPES + COUNTS + DIRECTIONS + ANGLES
# The answer options of each question category, as the benchmarks ask them (multiple choice): a model answers among
# its item's candidates, so one that never saw a category's answers scores at chance there, not at 0. The attribute
# QA has two question types, told apart by their first words.
CANDIDATES = {"position": ("yes", "no"), "size": ("yes", "no"), "existence": ("yes", "no"), "counting": COUNTS,
              "rotation": DIRECTIONS, "rotation_angle": ANGLES, "count_room": COUNTS,
              "rel_distance": ("first", "second"),
              "what colour": tuple(W.COLOURS), "what shape": W.SHAPES}


def canonical(scene: W.Scene, cam: W.Camera) -> np.ndarray:
    return cam.to_canonical(np.array([o.centre for o in scene.objects]))


def facing(obj: W.Obj, cam: W.Camera) -> str:
    """The object's front direction relative to the camera, in 8 bins (away = along the view direction)."""
    front = np.array([np.cos(obj.yaw), np.sin(obj.yaw), 0.0])
    ahead = np.array([np.cos(cam.yaw), np.sin(cam.yaw), 0.0])
    angle = np.arctan2(front @ cam.right, front @ ahead)  # 0 away, +90 right
    return DIRECTIONS[int(np.round(angle / (np.pi / 4))) % 8]


def item(kind: str, category: str, scene: int, views: list[int], question: str, refs: list[int], answer) -> dict:
    return {"kind": kind, "category": category, "scene": scene, "views": views, "question": question,
            "refs": refs, "answer": str(answer)}


def isb_items(s: int, scene: W.Scene, cam: W.Camera, ann: list[dict], rng: np.random.Generator) -> list[dict]:
    """Single-view questions about one view (index 0 of the scene's views)."""
    vis = [i for i, a in enumerate(ann) if a["visible"]]
    xyz = canonical(scene, cam)
    out = []
    pairs = list(itertools.permutations(vis, 2))
    rng.shuffle(pairs)
    for a, b in pairs[:3]:
        dx, dy = xyz[a, 0] - xyz[b, 0], xyz[a, 1] - xyz[b, 1]
        rel = [(w, v) for w, v in (("left of", -dx), ("right of", dx), ("in front of", -dy), ("behind", dy))
               if abs(v) >= MARGIN]
        if rel:
            word, v = rel[int(rng.integers(len(rel)))]
            out.append(item("isb", "position", s, [0], f"is {{A}} {word} {{B}} ?", [a, b], "yes" if v > 0 else "no"))
        oa, ob = scene.objects[a], scene.objects[b]
        size = [(w, v) for w, v in (("bigger than", np.log(oa.volume / ob.volume)),
                                    ("taller than", oa.scale[2] - ob.scale[2])) if abs(v) >= 0.25]
        if size:
            word, v = size[int(rng.integers(len(size)))]
            out.append(item("isb", "size", s, [0], f"is {{A}} {word} {{B}} ?", [a, b], "yes" if v > 0 else "no"))
    for a in vis[:2]:
        others = [i for i in vis if i != a]
        word, axis, sign = [("left of", 0, -1), ("behind", 1, 1)][int(rng.integers(2))]
        gaps = [sign * (xyz[i, axis] - xyz[a, axis]) for i in others]
        if all(abs(g) >= MARGIN for g in gaps):
            answer = "yes" if any(g > 0 for g in gaps) else "no"
            out.append(item("isb", "existence", s, [0], f"is there an object {word} {{A}} ?", [a], answer))
        out.append(item("isb", "rotation", s, [0], "which way does {A} face ?", [a], facing(scene.objects[a], cam)))
    if vis:
        a = vis[int(rng.integers(len(vis)))]
        left = [i for i in vis if i != a and xyz[i, 0] < xyz[a, 0] - MARGIN]
        if all(abs(xyz[i, 0] - xyz[a, 0]) >= MARGIN for i in vis if i != a):
            out.append(item("isb", "counting", s, [0], "how many objects are left of {A} ?", [a], f"c{len(left)}"))
        out.append(item("isb", "counting", s, [0], "how many objects are there ?", [], f"c{len(vis)}"))
    return out


def vsi_items(s: int, scene: W.Scene, cams: list[W.Camera], anns: list[list[dict]], turn: int,
              rng: np.random.Generator) -> list[dict]:
    """Two-view questions (views 0 and 1 of the scene, the second `turn` degrees further around the room)."""
    out = [item("vsi", "rotation_angle", s, [0, 1], "how far did the camera move around the room ?", [], f"deg{turn}")]
    seen = sorted({i for ann in anns for i, a in enumerate(ann) if a["visible"]})
    out.append(item("vsi", "count_room", s, [0, 1], "how many objects are in the room ?", [], f"c{len(seen)}"))
    vis0 = [i for i, a in enumerate(anns[0]) if a["visible"]]
    if len(vis0) >= 3:
        a, b, c = rng.choice(vis0, 3, replace=False).tolist()
        p = np.array([o.pos for o in scene.objects])
        da, db = np.hypot(*(p[a] - p[c])), np.hypot(*(p[b] - p[c]))
        if abs(da - db) >= MARGIN:
            out.append(item("vsi", "rel_distance", s, [0, 1], "which is closer to {C} , {A} or {B} ?", [a, b, c],
                            "first" if da < db else "second"))
    return out


def general_items(s: int, scene: W.Scene, ann: list[dict], rng: np.random.Generator) -> list[dict]:
    vis = [i for i, a in enumerate(ann) if a["visible"]]
    out = []
    for i in vis:
        o = scene.objects[i]
        if sum(scene.objects[j].shape == o.shape for j in vis) == 1:
            out.append(item("general", "attribute", s, [0], f"what colour is the {o.shape} ?", [], o.colour))
        if sum(scene.objects[j].colour == o.colour for j in vis) == 1:
            out.append(item("general", "attribute", s, [0], f"what shape is the {o.colour} object ?", [], o.shape))
    rng.shuffle(out)
    return out


def balance(items: list[dict], rng: np.random.Generator) -> list[dict]:
    """Per (category, template): as many 'yes' as 'no' (the surplus dropped at random); other answers kept."""
    out, groups = [], {}
    for it in items:
        if it["answer"] in ("yes", "no", "first", "second"):
            groups.setdefault((it["category"], it["question"], it["answer"] in ("yes", "first")), []).append(it)
        else:
            out.append(it)
    for (cat, q, positive), group in groups.items():
        other = groups.get((cat, q, not positive), [])
        keep = min(len(group), len(other))
        out += [group[i] for i in rng.permutation(len(group))[:keep]]
    return [out[i] for i in rng.permutation(len(out))]


def candidates(it: dict) -> tuple[str, ...]:
    """The answers an item is asked to choose among (CANDIDATES: its category's, or its attribute question type's)."""
    key = " ".join(it["question"].split()[:2]) if it["category"] == "attribute" else it["category"]
    if key not in CANDIDATES:
        raise ValueError(f"no answer candidates for {key!r} (item {it['question']!r}): add them to qa.CANDIDATES")
    return CANDIDATES[key]


def test_sets(items: list[dict], formats: tuple[str, ...] = FORMATS) -> dict[str, list]:
    """What each model is asked, as (item, format, cues) rows: {'isb/<format>': every ISB-mini item in that format,
    'vsi': VSI-mini, 'general': the attribute QA}, the last two in natural language on the raw images. The validation
    sets are asked in natural language only (`formats`): the gate reads nothing else."""
    isb = [it for it in items if it["kind"] == "isb"]
    rows = {f"isb/{fmt}": [(it, fmt, None) for it in isb] for fmt in formats}
    return rows | {kind: [(it, "nl+raw", None) for it in items if it["kind"] == kind] for kind in ("vsi", "general")}


def text_cue(fmt: str, name: str, box, k: int) -> str:
    text = fmt.split("+")[0]
    coords = " ".join(f"n{int(c)}" for c in box) if box is not None else ""
    return {"nl": f"the {name}", "ref": f"<ref> {name} </ref>", "refbox": f"<ref> region </ref> <box> {coords} </box>",
            "capbox": f"the {name} <box> {coords} </box>", "mark": f"object mark{k + 1}"}[text]


def question_text(it: dict, names: list[str], ann: list[dict], fmt: str, cues: list[int] | None = None) -> str:
    """The item's question in a format. `cues`: the objects the box and mark cues point at (default: the
    referred ones; the wrong-cue control points them at other objects)."""
    q = it["question"]
    for k, (ref, cue) in enumerate(zip(it["refs"], cues or it["refs"])):
        q = q.replace("{" + "ABC"[k] + "}", text_cue(fmt, names[ref], ann[cue]["box"], k))
    return q


def overlay(image: np.ndarray, ids: np.ndarray, ann: list[dict], fmt: str, cues: list[int]) -> np.ndarray:
    """The image of a format: the cue objects' boxes drawn, masks tinted, or id tags placed, in mark colours."""
    visual = fmt.split("+")[1]
    if visual == "raw" or not cues:
        return image
    from PIL import Image, ImageDraw

    if visual == "masks":
        out = image.astype(float).copy()
        for k, i in enumerate(cues):
            m = ids == i + 1
            out[m] = 0.4 * out[m] + 0.6 * np.array(MARK_COLOURS[k])
        return out.astype(np.uint8)
    img = Image.fromarray(image)
    draw = ImageDraw.Draw(img)
    for k, i in enumerate(cues):
        box = ann[i]["box"]
        if box is None:
            continue
        if visual == "boxes":
            draw.rectangle(box, outline=MARK_COLOURS[k])
        else:  # ids: a 3 x 3 tag of the mark's colour at the box's top-left corner
            draw.rectangle([box[0], box[1], box[0] + 2, box[1] + 2], fill=MARK_COLOURS[k])
    return np.asarray(img)


def image_index(it: dict, v: int = 0) -> int:
    """Where an item's view v lies in the data step's image arrays (VIEWS images per scene, in scene order)."""
    return VIEWS * it["scene"] + it["views"][v]
