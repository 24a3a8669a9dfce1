"""One (training regime, seed): the small VLM on the seed's frozen pretrained encoder, trained the regime's way
(methods.training_set), then asked every test item (ISB-mini in each of the 19 formats, VSI-mini and the general QA in
natural language on the raw images) and every validation item (natural language on the raw images: what pilots are
judged on). Each answer is chosen among its item's candidates (multiple choice); the evaluate step scores them."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workflow.core.io import load_state, read_npz, write_json
from workflow.core.step import Step, seed_everything

from . import methods as M
from . import qa

READS = ("internspatial.train",)


def main(argv=None):
    step = Step("internspatial", "train", __doc__)
    step.parser.add_argument("--images", type=Path, required=True)
    step.parser.add_argument("--qa", type=Path, required=True)
    step.parser.add_argument("--encoder", type=Path, required=True)
    step.parser.add_argument("--regime", choices=M.REGIMES, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    rng = np.random.default_rng(args.seed)
    arrays = read_npz(args.images)
    saved = load_state(args.encoder)
    encoder = M.Encoder(saved["meta"]["width"], saved["meta"]["depth"])
    encoder.load_state_dict(saved["state_dict"])
    encoder.requires_grad_(False)  # frozen: every regime and control of the seed sees the same features
    data = M.Data(arrays["images"], arrays["ids"], json.loads(args.qa.read_text()), encoder)
    rows = M.training_set(data, args.regime, rng)
    model = M.VLM(len(data.vocab), len(qa.ANSWERS), encoder.width, p["d"], p["layers"], p["heads"])
    step.log(f"{args.regime}: {len(rows)} training items, {sum(q.numel() for q in model.parameters())} parameters")
    M.train(model, data, rows, p, rng, step.curve)
    answers = {name: M.predict(model, data, r) for name, r in qa.test_sets(data.items["test"]).items()}
    val = {name: M.predict(model, data, r) for name, r in qa.test_sets(data.items["val"], ("nl+raw",)).items()}
    write_json(args.out, {"regime": args.regime, "seed": args.seed, "train_items": len(rows), "answers": answers,
                          "val_answers": val})
    loss = step.curves["loss"][-1][1]
    step.finish(metrics={"final_loss": loss, "train_items": len(rows)}, outputs=[args.out])


if __name__ == "__main__":
    main()
