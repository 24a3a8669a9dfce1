"""AudioEventSet-mini: the real theme sounds and the procedural classes, each with two caption phrases, kept only
if a held-out clip of it can be told from the others (the paper's "unique and discernible" rule made operational,
spec 5.3: a classifier on clip features, held-out accuracy >= min_accuracy per class). Writes the event set (kept
classes, recipes, phrases, every class's accuracy) and the real sounds at 8 kHz."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import write_json, write_npz
from workflow.core.step import Step

from . import sounds as S

READS = ("aurelius.events",)


def candidates(per_family: int, seed: int) -> list[dict]:
    real = [{"kind": "real", "name": n, "family": "theme", "phrases": p} for n, p in S.REAL.items()]
    made = [{"kind": "procedural", "name": f"{fam}_{i}", "family": fam, "recipe": S.recipe(fam, i, seed),
             "phrases": [names[i], " ".join(names[i].split()[::-1])]}
            for fam, names in S.FAMILIES.items() for i in range(per_family)]
    return real + made


def features(x: np.ndarray) -> np.ndarray:
    """A clip's log-mel mean, spread and peak per band, and its length: what tells classes apart by ear."""
    m = S.mel(x)
    return np.concatenate([m.mean(0), m.std(0), m.max(0), [len(x) / S.SR]])


def discernibility(events: list[dict], real: dict, clips: int, rng: np.random.Generator) -> np.ndarray:
    """Per class, the held-out accuracy of a logistic regression on clip features (half the clips to fit)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.array([features(S.clip(e, real, rng)) for e in events for _ in range(clips)])
    y = np.repeat(np.arange(len(events)), clips)
    fit = np.tile(np.arange(clips) < clips // 2, len(events))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(x[fit], y[fit])
    right = model.predict(x[~fit]) == y[~fit]
    return np.array([right[y[~fit] == c].mean() for c in range(len(events))])


def main(argv=None):
    step = Step("aurelius", "events", __doc__)
    step.parser.add_argument("--sounds", type=Path, required=True)
    step.parser.add_argument("--events", type=Path, required=True)
    step.parser.add_argument("--real", type=Path, required=True)
    args, p = step.start(argv)
    real = S.read_real(args.sounds.read_bytes())
    events = candidates(p["per_family"], p["seed"])
    accuracy = discernibility(events, real, p["clips"], np.random.default_rng(p["seed"]))
    for e, acc in zip(events, accuracy):
        e["accuracy"] = float(acc)
    kept = [e for e in events if e["accuracy"] >= p["min_accuracy"]]
    dropped = [e["name"] for e in events if e["accuracy"] < p["min_accuracy"]]
    step.log(f"{len(kept)} of {len(events)} classes discernible; dropped {dropped}")
    write_npz(args.real, **real)
    write_json(args.events, {"classes": kept, "dropped": [e for e in events if e["name"] in dropped]})
    step.finish(metrics={"classes": len(kept), "dropped": len(dropped), "mean_accuracy": float(accuracy.mean())},
                outputs=[args.events, args.real])


if __name__ == "__main__":
    main()
