"""Transformer teacher of one language (a variant: fully trained, or under-trained for C5): train on words of the
language's sampler, then measure its NSP accuracy against the target DFA (the C2/C3 accuracy gate)."""
from __future__ import annotations

from pathlib import Path

from workflow.core.io import save_state, write_json
from workflow.core.step import Step, seed_everything

from . import methods, teachers

READS = ("lnsp.teacher", "lnsp.variants.{variant}")


def main(argv=None):
    step = Step("lnsp", "train_teacher", __doc__)
    step.parser.add_argument("--language", required=True, choices=sorted(methods.LANGUAGES))
    step.parser.add_argument("--variant", required=True, choices=["full", "weak"])
    step.parser.add_argument("--seed", type=int, required=True, help="corpus, initialisation and batch seed")
    step.parser.add_argument("--out", type=Path, required=True, help="checkpoint (.pt, tensors only)")
    step.parser.add_argument("--summary", type=Path, required=True, help=".json: training info and NSP accuracy")
    args, p = step.start(argv)
    seed_everything(args.seed)
    curve = []

    def progress(s, loss):
        curve.append((s, loss))
        if s % 200 == 0:
            step.log(f"step {s}: loss {loss:.4f}")

    state, config, info = teachers.train_teacher(args.language, args.seed, profile=p, steps=p["steps"], progress=progress)
    teacher = teachers.load_teacher(config, state, p_min=p["p_min"])
    acc = methods.teacher_metrics(teacher, args.language, args.seed)
    step.log(f"held-out NSP string accuracy {acc['heldout_string_acc']:.4f}, own samples {acc['own_string_acc']:.4f}")
    meta = {"language": args.language, "variant": args.variant, "seed": args.seed, "config": config, "p_min": p["p_min"]}
    save_state(args.out, state, meta)
    info.pop("losses")
    write_json(args.summary, {"language": args.language, "variant": args.variant, "seed": args.seed, "steps": p["steps"],
                              **{k: v for k, v in info.items()}, **acc})
    step.finish(metrics={"final_loss": info["final_loss"], **acc}, curves={"loss": curve},
                outputs=[args.out, args.summary])


if __name__ == "__main__":
    main()
