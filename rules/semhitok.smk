# SemHiTok: a unified image tokenizer with a semantic-guided hierarchical codebook (spec: shared/papers/semhitok.md)
# image sets -> frozen networks per (set, seed): teacher, evaluator, stage-1 semantic codebook -> one job per
# tokenizer (SGHC, baselines, the joint-loss sweep, the control) -> claims -> figures
localrules: semhitok, semhitok_evaluate, semhitok_plot


from workflow.papers.semhitok import plan as semhitok_plan

SEMHITOK = PARAMS["semhitok"]
check_plan(semhitok_plan, SEMHITOK)
SEMHITOK_WILDCARDS = dict(semhitok_set="digits|fashion", semhitok_variant="[a-z]+(?:_[0-9.]+)?")
FIGURES["semhitok"] = SEMHITOK_FIGURES = semhitok_plan.figure_paths()


rule semhitok:
    input:
        "results/semhitok/tracking.json",  # claims, figures, and every job logged to MLflow
        semhitok_plan.out_path("claims.json"),
        SEMHITOK_FIGURES,


rule semhitok_data:
    input:
        raw=lambda wildcards: semhitok_plan.raw_files(wildcards.semhitok_set),
        stamp=stamp("papers.semhitok.data"),
    output:
        semhitok_plan.data_path("{semhitok_set}"),
    wildcard_constraints:
        **SEMHITOK_WILDCARDS,
    log:
        **logs("semhitok", "data", "{semhitok_set}"),
    benchmark:
        bench("semhitok", "data", "{semhitok_set}")
    threads: 1
    resources:
        **measured("semhitok_data"),
    shell:
        step("papers.semhitok.data", "{wildcards.semhitok_set} --raw {input.raw:q} --out {output:q}")


rule semhitok_train_nets:
    input:
        data=semhitok_plan.data_path("{semhitok_set}"),
        stamp=stamp("papers.semhitok.train_nets"),
    output:
        nets=semhitok_plan.nets_path("{semhitok_set}", "{seed}"),
        summary=semhitok_plan.nets_summary("{semhitok_set}", "{seed}"),
    wildcard_constraints:
        **SEMHITOK_WILDCARDS,
    log:
        **logs("semhitok", "train_nets", "{semhitok_set}/s{seed}"),
    benchmark:
        bench("semhitok", "train_nets", "{semhitok_set}/s{seed}")
    threads: 1
    resources:
        **measured("semhitok_train_nets"),
    shell:
        step("papers.semhitok.train_nets",
             "--data {input.data:q} --seed {wildcards.seed} --out {output.nets:q} --summary {output.summary:q}")


rule semhitok_tokenizer:
    input:
        data=semhitok_plan.data_path("{semhitok_set}"),
        nets=semhitok_plan.nets_path("{semhitok_set}", "{seed}"),
        stamp=stamp("papers.semhitok.tokenizer"),
    output:
        run=semhitok_plan.run_path("{semhitok_set}", "{seed}", "{semhitok_variant}"),
        samples=semhitok_plan.samples_path("{semhitok_set}", "{seed}", "{semhitok_variant}"),
    wildcard_constraints:
        **SEMHITOK_WILDCARDS,
    log:
        **logs("semhitok", "tokenizer", "{semhitok_set}/{semhitok_variant}_s{seed}"),
    benchmark:
        bench("semhitok", "tokenizer", "{semhitok_set}/{semhitok_variant}_s{seed}")
    threads: 1
    resources:
        **measured("semhitok_tokenizer"),
    shell:
        step("papers.semhitok.tokenizer",
             "--data {input.data:q} --nets {input.nets:q} --variant {wildcards.semhitok_variant} "
             "--seed {wildcards.seed} --out {output.run:q} --samples {output.samples:q}")


rule semhitok_evaluate:
    input:
        runs=semhitok_plan.run_paths(SEMHITOK["plan"]),
        nets=semhitok_plan.summaries(SEMHITOK["plan"]),
        claims="workflow/papers/semhitok/claims.yaml",
        stamp=stamp("papers.semhitok.evaluate"),  # the plan: which runs exist
    output:
        table=semhitok_plan.out_path("table.csv"),
        claims=semhitok_plan.out_path("claims.json"),
    log:
        **logs("semhitok", "evaluate"),
    benchmark:
        bench("semhitok", "evaluate")
    threads: 1
    resources:
        **measured("semhitok_evaluate"),
    shell:
        step("papers.semhitok.evaluate", "--table {output.table:q} --claims {output.claims:q}")


rule semhitok_plot:
    input:
        runs=semhitok_plan.run_paths(SEMHITOK["plan"]),
        samples=[semhitok_plan.samples_path(*run) for run in semhitok_plan.runs(SEMHITOK["plan"])],
        nets=semhitok_plan.summaries(SEMHITOK["plan"]),
        stamp=stamp("papers.semhitok.plot"),
    output:
        SEMHITOK_FIGURES,
    log:
        **logs("semhitok", "plot"),
    benchmark:
        bench("semhitok", "plot")
    threads: 1
    resources:
        **measured("semhitok_plot"),
    shell:
        step("papers.semhitok.plot", "--figures {output:q}")
