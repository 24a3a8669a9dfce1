"""One run: an MLP-SNN trained with one regulariser of the membrane-potential perturbation dynamic under one training
mode (Gaussian noise or FGSM adversarial training), then judged on the test images: clean, Gaussian-noise, FGSM and
PGD accuracy (white-box through the surrogate gradient), and the MPPD magnitude."""
from __future__ import annotations

from pathlib import Path

import torch

from workflow.core.io import read_npz, write_json
from workflow.core.step import Step, seed_everything

from . import methods as M

READS = ("mppd_tv.model", "mppd_tv.train", "mppd_tv.eval")


def main(argv=None):
    step = Step("mppd_tv", "train", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--mode", choices=M.MODES, required=True)
    step.parser.add_argument("--reg", choices=M.REGS, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    d = read_npz(args.data)
    model = M.SpikingMLP(d["x_train"][0].size, p["hidden"], int(d["y_train"].max()) + 1, p["steps"], p["tau"], p["slope"])
    curves = M.train(model, args.reg, args.mode, d["x_train"], d["y_train"], p, args.seed, step.log)
    acc = M.robustness(model, d["x_test"], d["y_test"], p, args.seed)
    acc["robust_score"] = M.robust_score(acc, p["score_sigmas"], p["score_eps"])
    step.log(" ".join(f"{k}={v:.4f}" for k, v in acc.items()))
    write_json(args.out, {"mode": args.mode, "reg": args.reg, "seed": args.seed, **acc,
                          "parameters": sum(t.numel() for t in model.parameters()),
                          "torch_threads": torch.get_num_threads()})
    step.finish(metrics=acc, curves=curves, outputs=[args.out])


if __name__ == "__main__":
    main()
