"""The <text, audio> pairs (spec 5.3 pair generation): general pairs (one event, its plain caption, like
AudioCaps-style data; the zero-shot model's only training data), relation pairs for training (the fine-tuning and
from-scratch data, N_max of them), held-out relation test pairs (the claims are judged on them) and validation pairs
drawn the same way (pilots are judged on them, never on the test pairs). A relation pair draws its relation uniformly,
distinct classes for its slots, a phrase for each, one of the relation's five templates, and a fresh clip per slot;
its log-mel is the regression target and the reference the evaluator scores."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_json, read_npz, write_json, write_npz
from workflow.core.step import Step

from . import relations as R
from . import sounds as S

READS = ("aurelius.pairs",)


def relation_pair(rel: R.Relation, classes: list[dict], real: dict, rng: np.random.Generator):
    slots = rng.choice(len(classes), size=2, replace=False)
    n = int(rng.integers(2, 6)) if rel.name == "count" else None
    phrases = [classes[c]["phrases"][int(rng.integers(2))] for c in slots]
    clips = [S.clip(classes[c], real, rng) for c in slots]
    canvas, occ = R.render(rel.name, clips, rng, n)
    meta = {"text": R.caption(rel, phrases, int(rng.integers(len(rel.templates))), n), "relation": rel.name,
            "group": rel.group, "arity": rel.arity, "classes": [int(c) for c in slots[:max(rel.arity, 2)]],
            "n": n, "occurrences": occ}
    return meta, S.mel(canvas)


def general_pair(classes: list[dict], real: dict, rng: np.random.Generator, onset: tuple[float, float]):
    c = int(rng.integers(len(classes)))
    canvas = S.empty_canvas()
    start, end = S.place(canvas, S.clip(classes[c], real, rng), float(rng.uniform(*onset)))
    meta = {"text": classes[c]["phrases"][int(rng.integers(2))], "relation": "single", "group": "general",
            "arity": 1, "classes": [c], "n": None, "occurrences": [{"slot": 0, "effect": "none", "start": start,
                                                                     "end": end}]}
    return meta, S.mel(canvas)


def build(p: dict, classes: list[dict], real: dict) -> tuple[dict, dict]:
    rng = np.random.default_rng(p["seed"])
    rels = R.relations(p["nested"])
    meta, mels = {}, {}
    for split, n in (("general", p["general"]), ("train", p["train"]), ("test", p["test"]), ("val", p["val"])):
        rows = [general_pair(classes, real, rng, tuple(p["general_onset"])) if split == "general" else
                relation_pair(rels[int(rng.integers(len(rels)))], classes, real, rng) for _ in range(n)]
        meta[split] = [m for m, _ in rows]
        mels[split] = np.stack([x for _, x in rows]).astype(np.float16)
    return meta, mels


def vocabulary(meta: dict) -> list[str]:
    """Every word of every caption (and of every template, so that no test word is unknown), sorted."""
    words = {w for rows in meta.values() for m in rows for w in m["text"].split()}
    return sorted(words)


def main(argv=None):
    step = Step("aurelius", "pairs", __doc__)
    step.parser.add_argument("--events", type=Path, required=True)
    step.parser.add_argument("--real", type=Path, required=True)
    step.parser.add_argument("--pairs", type=Path, required=True)
    step.parser.add_argument("--mels", type=Path, required=True)
    args, p = step.start(argv)
    classes = read_json(args.events)["classes"]
    meta, mels = build(p, classes, read_npz(args.real))
    vocab = vocabulary(meta)
    step.log(f"{len(classes)} classes, {len(R.relations(p['nested']))} relations, {len(vocab)} words; "
             + ", ".join(f"{k}: {len(v)}" for k, v in meta.items()))
    write_npz(args.mels, **mels)
    write_json(args.pairs, {"vocab": vocab, **meta})
    step.finish(metrics={"words": len(vocab), **{f"{k}_pairs": len(v) for k, v in meta.items()}},
                outputs=[args.pairs, args.mels])


if __name__ == "__main__":
    main()
