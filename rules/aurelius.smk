# Aurelius: relation-aware text-to-audio and its MSR evaluation (spec: shared/papers/aurelius.md)
# real + procedural event classes -> relation pairs -> evaluator (detector, effect classifier; scores the reference),
# and beside it one TTA model per (strategy, seed), fine-tuned runs from their zero-shot model, each generating its
# test audio -> every run scored, claims -> tables, figures and the examples as audio
localrules: aurelius, aurelius_evaluate, aurelius_plot


from workflow.papers.aurelius import plan as aurelius_plan

AURELIUS = PARAMS["aurelius"]
check_plan(aurelius_plan, AURELIUS)
AURELIUS_FIGURES = aurelius_plan.figure_paths()
AURELIUS_SOUNDS = aurelius_plan.sound_paths()  # the spectrograms' examples as audio: the report plays them
FIGURES["aurelius"] = AURELIUS_FIGURES + AURELIUS_SOUNDS


rule aurelius:
    input:
        "results/aurelius/tracking.json",  # claims, figures, and every job logged to MLflow
        aurelius_plan.out_path("claims.json"),
        AURELIUS_FIGURES,
        AURELIUS_SOUNDS,


rule aurelius_events:
    input:
        sounds="data/raw/freedesktop_sounds.zip",
        stamp=stamp("papers.aurelius.events"),
    output:
        events=aurelius_plan.events_path(),
        real=aurelius_plan.real_path(),
    log:
        **logs("aurelius", "events"),
    benchmark:
        bench("aurelius", "events")
    threads: 1
    resources:
        **measured("aurelius_events"),
    shell:
        step("papers.aurelius.events", "--sounds {input.sounds:q} --events {output.events:q} --real {output.real:q}")


rule aurelius_pairs:
    input:
        events=aurelius_plan.events_path(),
        real=aurelius_plan.real_path(),
        stamp=stamp("papers.aurelius.pairs"),
    output:
        pairs=aurelius_plan.pairs_path(),
        mels=aurelius_plan.mels_path(),
    log:
        **logs("aurelius", "pairs"),
    benchmark:
        bench("aurelius", "pairs")
    threads: 1
    resources:
        **measured("aurelius_pairs"),
    shell:
        step("papers.aurelius.pairs",
             "--events {input.events:q} --real {input.real:q} --pairs {output.pairs:q} --mels {output.mels:q}")


rule aurelius_train_evaluator:
    input:
        events=aurelius_plan.events_path(),
        real=aurelius_plan.real_path(),
        pairs=aurelius_plan.pairs_path(),
        mels=aurelius_plan.mels_path(),
        stamp=stamp("papers.aurelius.train_evaluator"),
    output:
        model=aurelius_plan.evaluator_path(),
        reference=aurelius_plan.reference_path(),
    log:
        **logs("aurelius", "train_evaluator"),
    benchmark:
        bench("aurelius", "train_evaluator")
    threads: 1
    resources:
        **measured("aurelius_train_evaluator"),
    shell:
        step("papers.aurelius.train_evaluator",
             "--events {input.events:q} --real {input.real:q} --pairs {input.pairs:q} --mels {input.mels:q} "
             "--model {output.model:q} --reference {output.reference:q}")


rule aurelius_zero_shot:
    input:
        pairs=aurelius_plan.pairs_path(),
        mels=aurelius_plan.mels_path(),
        stamp=stamp("papers.aurelius.train"),
    output:
        run=aurelius_plan.run_path("{aurelius_zs}", "{seed}"),
        model=aurelius_plan.model_path("{aurelius_zs}", "{seed}"),
    wildcard_constraints:
        aurelius_zs="zs(?:_scrambled)?",
    log:
        **logs("aurelius", "train", "{aurelius_zs}_s{seed}"),
    benchmark:
        bench("aurelius", "train", "{aurelius_zs}_s{seed}")
    threads: 1
    resources:
        **measured("aurelius_zero_shot"),
    shell:
        step("papers.aurelius.train",
             "--pairs {input.pairs:q} --mels {input.mels:q} "
             "--run {wildcards.aurelius_zs} --seed {wildcards.seed} --out {output.run:q} --model {output.model:q}")


rule aurelius_train:
    input:
        pairs=aurelius_plan.pairs_path(),
        mels=aurelius_plan.mels_path(),
        base=lambda wildcards: aurelius_plan.base_model(wildcards.aurelius_run, wildcards.seed),
        stamp=stamp("papers.aurelius.train"),
    output:
        aurelius_plan.run_path("{aurelius_run}", "{seed}"),
    wildcard_constraints:
        aurelius_run="f[ts][a-z_]*_[1-3]",
    log:
        **logs("aurelius", "train", "{aurelius_run}_s{seed}"),
    benchmark:
        bench("aurelius", "train", "{aurelius_run}_s{seed}")
    threads: 1
    resources:
        **measured("aurelius_train"),
    shell:
        step("papers.aurelius.train",
             "--pairs {input.pairs:q} --mels {input.mels:q} --base {input.base:q} "
             "--run {wildcards.aurelius_run} --seed {wildcards.seed} --out {output:q}")


rule aurelius_evaluate:
    input:
        runs=aurelius_plan.run_paths(AURELIUS["plan"]),
        evaluator=aurelius_plan.evaluator_path(),
        reference=aurelius_plan.reference_path(),
        pairs=aurelius_plan.pairs_path(),
        mels=aurelius_plan.mels_path(),
        claims="workflow/papers/aurelius/claims.yaml",
        stamp=stamp("papers.aurelius.evaluate"),  # the plan: which runs exist
    output:
        table=aurelius_plan.out_path("scores.csv"),
        claims=aurelius_plan.out_path("claims.json"),
    log:
        **logs("aurelius", "evaluate"),
    benchmark:
        bench("aurelius", "evaluate")
    threads: 1
    resources:
        **measured("aurelius_evaluate"),
    shell:
        step("papers.aurelius.evaluate",
             "--evaluator {input.evaluator:q} --reference {input.reference:q} --pairs {input.pairs:q} "
             "--mels {input.mels:q} --table {output.table:q} --claims {output.claims:q}")


rule aurelius_plot:
    input:
        table=aurelius_plan.out_path("scores.csv"),
        runs=aurelius_plan.run_paths(AURELIUS["plan"]),
        pairs=aurelius_plan.pairs_path(),
        mels=aurelius_plan.mels_path(),
        stamp=stamp("papers.aurelius.plot"),
    output:
        figures=AURELIUS_FIGURES,
        sounds=AURELIUS_SOUNDS,
    log:
        **logs("aurelius", "plot"),
    benchmark:
        bench("aurelius", "plot")
    threads: 1
    resources:
        **measured("aurelius_plot"),
    shell:
        step("papers.aurelius.plot",
             "--table {input.table:q} --pairs {input.pairs:q} --mels {input.mels:q} --figures {output.figures:q} "
             "--sounds {output.sounds:q}")
