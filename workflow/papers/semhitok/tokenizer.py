"""One tokenizer of one (image set, seed): trained on the training images with the frozen networks of `nets`, then
judged on the test images: PSNR, SSIM, rFD (evaluator features), code usage, and the understanding probe on its
codebook features (the code vectors its token ids name, as the paper's MLLM reads them; epoch chosen on the
validation images), beside the spec's probe on the token ids (probe_ids). Variants: sghc, flat, pixel, semonly,
random (the control), coupled (K3's control and placebo), widepixel (B1 widened, a sensitivity row) and
joint_<lambda>."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.core.io import load_state, read_npz, write_json, write_npz
from workflow.core.step import Step, seed_everything

from . import methods as M
from . import plan

READS = ("semhitok.tokenizer", "semhitok.codes", "semhitok.probe")


def frozen(path: Path):
    """(teacher, evaluator, stage-1 semantic VQ) from the nets checkpoint, in eval mode."""
    ckpt = load_state(path)
    state, meta = ckpt["state_dict"], ckpt["meta"]
    nets = {"teacher": M.Teacher(meta["n_classes"]), "evaluator": M.Evaluator(meta["evaluator_sizes"])}
    sem_codes = state["sem.vq.codes"].shape[0]
    nets["sem"] = M.SemanticVQ(sem_codes, 0)
    for name, net in nets.items():
        net.load_state_dict({k.split(".", 1)[1]: v for k, v in state.items() if k.startswith(name + ".")})
        net.eval()
    return nets["teacher"], nets["evaluator"], nets["sem"]


def main(argv=None):
    step = Step("semhitok", "tokenizer", __doc__)
    step.parser.add_argument("--data", type=Path, required=True)
    step.parser.add_argument("--nets", type=Path, required=True)
    step.parser.add_argument("--variant", required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    step.parser.add_argument("--samples", type=Path, required=True)
    args, p = step.start(argv)
    import torch

    kind, lam = plan.kind_of(args.variant)
    seed_everything(args.seed)
    rng = np.random.default_rng(args.seed)
    d = read_npz(args.data)
    teacher, evaluator, sem = frozen(args.nets)
    tok = M.Tokenizer(kind, p["n_sem"], p["m"], sem, teacher, p["restart_every"], lam)
    # the control's routing: a fixed random sub-codebook per (image, patch), the same in training and test
    routes = ({s: np.random.default_rng([args.seed, i]).integers(0, p["n_sem"], (len(d[f"x_{s}"]), 16))
               for i, s in enumerate(("train", "val", "test"))} if kind == "random" else {})
    M.fit_tokenizer(tok, d["x_train"], routes.get("train"), p, rng, step.curve)
    recs, tokens, codebook = {}, {}, {}
    for s in ("train", "val", "test"):
        recs[s], tokens[s], codebook[s] = M.encode_all(tok, d[f"x_{s}"], routes.get(s))
    psnr, ssim = M.psnr_ssim(d["x_test"], recs["test"])
    questions = {s: d[f"q_{s}"] for s in tokens}
    probe, per_question = M.probe_accuracy(codebook, questions, None, p, rng)
    probe_ids, _ = M.probe_accuracy(tokens, questions, tok.vocab, p, rng)
    routing = routes["test"] if kind == "random" else tok.semantic_codes(torch.from_numpy(d["x_test"])).numpy()
    metrics = {"psnr": psnr, "ssim": ssim, "rfd": M.rfd(evaluator, d["x_test"], recs["test"]), "probe": probe,
               "probe_ids": probe_ids,
               "codes_used": int(len(np.unique(tokens["test"]))), "vocab": tok.vocab,
               "rho_routing": M.coupling(d["x_test"], routing)}
    step.log(" ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
    write_json(args.out, {"variant": args.variant, "kind": kind, "lambda": lam, "seed": args.seed, **metrics,
                          "probe_per_question": per_question,
                          "parameters": sum(q.numel() for q in tok.parameters() if q.requires_grad)})
    write_npz(args.samples, x=d["x_test"][:8], rec=recs["test"][:8].astype(np.float32))
    step.finish(metrics=metrics, curves={}, outputs=[args.out, args.samples])


if __name__ == "__main__":
    main()
