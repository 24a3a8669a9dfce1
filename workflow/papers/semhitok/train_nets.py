"""The frozen networks of one (image set, seed): the teacher (class from nuisance-free features; on the textured
digits the colours and textures are re-drawn every epoch), the independent evaluator of rFD (class + nuisance
bins), and stage 1, the semantic codebook on the teacher's features. Also the understanding probe on the teacher's
continuous features: the upper bound of every tokenizer's probe."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import read_npz, save_state, write_json
from workflow.core.step import Step, seed_everything

from . import methods as M
from . import world

READS = ("semhitok.nets", "semhitok.codes", "semhitok.probe")


def main(argv=None):
    step = Step("semhitok", "train_nets", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    step.parser.add_argument("--summary", type=Path, required=True)
    args, p = step.start(argv)
    import torch

    seed_everything(args.seed)
    rng = np.random.default_rng(args.seed)
    d = read_npz(args.data)
    classes = d["q_train"][:, :1]
    n_classes = int(classes.max()) + 1
    teacher = M.Teacher(n_classes)
    render_rng = np.random.default_rng([args.seed, 1])
    if "mask_train" in d:  # the digits: the nuisances re-drawn every epoch, by the data's own colour law
        def images(epoch):
            return world.render(d["mask_train"], classes[:, 0], float(d["hue_spread"]), render_rng)[0]
    else:
        def images(epoch):
            return d["x_train"]
    M.fit_classifier(teacher, images, classes, p["teacher"], rng, lambda n, s, v: step.curve(f"teacher_{n}", s, v))
    teacher.eval()
    targets = np.concatenate([classes, d["nuisance_train"]], 1)
    evaluator = M.Evaluator([int(targets[:, i].max()) + 1 for i in range(targets.shape[1])])
    M.fit_classifier(evaluator, lambda epoch: d["x_train"], targets, p["evaluator"], rng,
                     lambda n, s, v: step.curve(f"evaluator_{n}", s, v))
    evaluator.eval()
    sem = M.SemanticVQ(p["n_sem"], p["restart_every"])
    M.fit_semantic(sem, teacher, d["x_train"], p["stage1"], rng, step.curve)
    sem.eval()
    with torch.no_grad():
        feats = {s: teacher.features(torch.from_numpy(d[f"x_{s}"])).flatten(2).transpose(1, 2).numpy()
                 for s in ("train", "val", "test")}
        _, k_test, _ = sem(teacher.features(torch.from_numpy(d["x_test"])))
    upper, per_question = M.probe_accuracy(feats, {s: d[f"q_{s}"] for s in feats}, None, p, rng)
    test_targets = np.concatenate([d["q_test"][:, :1], d["nuisance_test"]], 1)
    metrics = {
        "teacher_acc": M.accuracy(teacher, d["x_test"], d["q_test"][:, :1])[0],
        "evaluator_acc": float(np.mean(M.accuracy(evaluator, d["x_test"], test_targets))),
        "sem_codes_used": int(len(np.unique(k_test.numpy()))),
        "rho_sem": M.coupling(d["x_test"], k_test.numpy()),
        "probe_continuous": upper,
    }
    step.log(" ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
    save_state(args.out, {f"teacher.{k}": v for k, v in teacher.state_dict().items()}
               | {f"evaluator.{k}": v for k, v in evaluator.state_dict().items()}
               | {f"sem.{k}": v for k, v in sem.state_dict().items()},
               {"n_classes": n_classes, "evaluator_sizes": [h.out_features for h in evaluator.heads]})
    write_json(args.summary, {**metrics, "probe_continuous_per_question": per_question, "seed": args.seed})
    step.finish(metrics=metrics, outputs=[args.out, args.summary])


if __name__ == "__main__":
    main()
