"""Every decoder of one seed's three models: ReFusion's setting chosen on the validation problems, then accuracy and
counts (forwards, query tokens, generated tokens) on the test problems of both tasks, then wall-clock speed at batch
1 on the first problems of each task."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import pandas as pd
import torch

from workflow.core.io import load_state, read_json, write_text
from workflow.core.step import Step, seed_everything
from workflow.lib import diffusion

from . import methods as M
from . import plan

READS = ("refusion.model", "refusion.decode")


def rows_of(decoder: str, task: str, pairs, responses, counts, vocab) -> list[dict]:
    """One row per problem; counts: (forwards, queries, queries without the cache) per problem."""
    out = []
    for i, ((prompt, _), tokens, (forwards, queries, full)) in enumerate(zip(pairs, responses, counts)):
        tokens = [int(t) for t in tokens]
        out.append(dict(decoder=decoder, task=task, problem=i, correct=M.correct(task, prompt, vocab.decode(tokens)),
                        generated=M.answer_length(tokens, vocab.eos), forwards=forwards, queries=queries,
                        queries_no_cache=full))
    return out


def arm_rows(model, task, pairs, vocab):
    prompts, _ = M.encode(vocab, pairs)
    tokens = M.arm_decode_batch(model, prompts, vocab.eos).tolist()
    counts = [(n, n, sum(M.PROMPT_LEN + i for i in range(n)))  # one forward and query per generated token
              for n in (M.answer_length(t, vocab.eos) for t in tokens)]
    return rows_of("arm", task, pairs, tokens, counts, vocab)


def mdm_rows(model, task, pairs, steps, block, vocab):
    prompts, _ = M.encode(vocab, pairs)
    out = diffusion.sample(model, prompts, M.GEN_LEN, steps, block, vocab.mask)
    full = out.forwards * (M.PROMPT_LEN + M.GEN_LEN)  # the whole sequence at every step (no cache to reuse)
    counts = [(out.forwards, full, full)] * len(pairs)
    return rows_of(f"mdm/s{steps}", task, pairs, out.tokens.tolist(), counts, vocab)


def refusion_rows(model, task, pairs, setting, name, vocab):
    prompts, _ = M.encode(vocab, pairs)
    got = [M.refusion_decode(model, prompts[i:i + 1], setting, vocab.mask, vocab.eos) for i in range(len(pairs))]
    return rows_of(name, task, pairs, [g[0] for g in got], [(g[1].forwards, g[1].queries, g[1].queries_full) for g in got], vocab)


def choose(model, sets, d, vocab, log) -> tuple[float, float]:
    """The grid setting with the best mean validation accuracy over the tasks (ties: more tokens per forward)."""
    scores = []
    for tau_slot, tau_tok in d["grid"]:
        s = M.Setting(d["slot"], d["serial_blocks"], tau_slot, tau_tok)
        rows = pd.DataFrame([r for task in M.TASKS for r in refusion_rows(model, task, sets[task]["validation"], s, "v", vocab)])
        acc = rows.groupby("task").correct.mean().mean()
        scores.append((acc, rows.generated.sum() / rows.forwards.sum(), tau_slot, tau_tok))
        log(f"validation: tau_slot {tau_slot} tau_tok {tau_tok}: accuracy {acc:.3f}, tokens per forward {scores[-1][1]:.2f}")
    return max(scores)[2:]


def speed_rows(models, sets, d, setting, vocab) -> list[dict]:
    """Generated tokens per second at batch 1 (median over repeats of the time for the first `speed_items` problems).
    Every decoder a timed claim compares is timed here, its controls included: K2's no-cache control and K4's
    one-slot control (ReFusion's slot parallelism removed, same model and serial blocks)."""
    one_slot = M.Setting(d["slot"], d["serial_blocks"], 2.0, 2.0)  # as the decodes' refusion_one_slot
    decoders = {
        "arm": lambda x: M.arm_decode(models["arm"], x, vocab.eos)[0],
        f"mdm/s{M.GEN_LEN}": lambda x: diffusion.sample(models["mdm"], x, M.GEN_LEN, M.GEN_LEN, d["mdm_block"],
                                                        vocab.mask).tokens[0].tolist(),
        "refusion": lambda x: M.refusion_decode(models["refusion"], x, setting, vocab.mask, vocab.eos)[0],
        "refusion_no_cache": lambda x: M.refusion_decode(models["refusion"], x, setting, vocab.mask, vocab.eos,
                                                         use_cache=False)[0],
        "refusion_one_slot": lambda x: M.refusion_decode(models["refusion"], x, one_slot, vocab.mask, vocab.eos)[0],
    }
    out = []
    for task in M.TASKS:
        prompts, _ = M.encode(vocab, sets[task]["test"][:d["speed_items"]])
        for name, decode in decoders.items():
            times, generated = [], 0
            for _ in range(d["speed_repeats"]):
                start = time.perf_counter()
                responses = [decode(prompts[i:i + 1]) for i in range(len(prompts))]
                times.append(time.perf_counter() - start)
                generated = sum(M.answer_length(list(map(int, r)), vocab.eos) for r in responses)
            out.append(dict(decoder=name, task=task, items=len(prompts), generated=generated,
                            seconds=statistics.median(times)))
    return out


def main(argv=None):
    step = Step("refusion", "decode", __doc__)
    step.parser.add_argument("--problems", type=Path, required=True)
    step.parser.add_argument("--seed", type=int, required=True)
    step.parser.add_argument("--out", type=Path, required=True)
    step.parser.add_argument("--speed", type=Path, required=True)
    args, p = step.start(argv)
    seed_everything(args.seed)
    vocab, sets = M.vocab(), read_json(args.problems)
    models = {}
    for kind in M.MODELS:
        models[kind] = M.build(p, kind, len(vocab))
        models[kind].load_state_dict(load_state(plan.model_path(kind, args.seed))["state_dict"])
        models[kind].eval()
    tau_slot, tau_tok = choose(models["refusion"], sets, p, vocab, step.log)
    chosen = M.Setting(p["slot"], p["serial_blocks"], tau_slot, tau_tok)
    rows = []
    with torch.no_grad():
        for task in M.TASKS:
            pairs = sets[task]["test"]
            rows += arm_rows(models["arm"], task, pairs, vocab)
            for steps in p["mdm_steps"]:
                rows += mdm_rows(models["mdm"], task, pairs, steps, p["mdm_block"], vocab)
            rows += refusion_rows(models["refusion"], task, pairs, chosen, "refusion", vocab)
            for ts, tt in p["grid"]:
                rows += refusion_rows(models["refusion"], task, pairs, M.Setting(p["slot"], p["serial_blocks"], ts, tt),
                                      plan.setting_name(ts, tt), vocab)
            rows += refusion_rows(models["refusion"], task, pairs, M.Setting(p["slot"], p["serial_blocks"], 0.0, 0.0),
                                  "refusion_plan_only", vocab)
            rows += refusion_rows(models["refusion"], task, pairs, M.Setting(p["slot"], p["serial_blocks"], 2.0, 2.0),
                                  "refusion_one_slot", vocab)
        speed = speed_rows(models, sets, p, chosen, vocab)
    table = pd.DataFrame(rows).assign(seed=args.seed, tau_slot=tau_slot, tau_tok=tau_tok)
    write_text(args.out, table.to_csv(index=False, float_format="%.6g"))
    write_text(args.speed, pd.DataFrame(speed).assign(seed=args.seed).to_csv(index=False, float_format="%.6g"))
    acc = table.groupby("decoder").correct.mean()
    step.finish(metrics={f"acc_{k.replace('/', '_')}": float(v) for k, v in acc.items()} |
                {"tau_slot": tau_slot, "tau_tok": tau_tok}, outputs=[args.out, args.speed])


if __name__ == "__main__":
    main()
