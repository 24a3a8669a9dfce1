# L*_nsp: automata learning in the next-symbol-prediction setting (spec: shared/papers/lnsp.md)
# exact-teacher runs per seed, with their controls (C1, C4) + Transformer teacher per (variant, seed, language)
# -> extraction, classic L* and C5's control per seed (C2, C3, C5) -> main table + claims -> figures
localrules: lnsp, lnsp_evaluate, lnsp_plot


from workflow.papers.lnsp import plan as lnsp_plan

LNSP = PARAMS["lnsp"]
LNSP_WILDCARDS = dict(variant="|".join(lnsp_plan.VARIANTS), lang="[a-z0-9_]+")
FIGURES["lnsp"] = LNSP_FIGURES = lnsp_plan.figure_paths()


rule lnsp:
    input:
        "results/lnsp/tracking.json",  # claims, figures, and every job logged to MLflow
        lnsp_plan.out_path("claims.json"),
        LNSP_FIGURES,


rule lnsp_exact:
    input:
        stamp=stamp("papers.lnsp.exact"),
    output:
        lnsp_plan.out_path("exact/s{seed}.csv"),
    log:
        **logs("lnsp", "exact", "s{seed}"),
    benchmark:
        bench("lnsp", "exact", "s{seed}")
    threads: 1
    resources:
        **measured("lnsp_exact"),
    shell:
        step("papers.lnsp.exact", "--seed {wildcards.seed} --out {output:q}")


rule lnsp_train_teacher:
    input:
        stamp=stamp("papers.lnsp.train_teacher"),
    output:
        **lnsp_plan.teacher_files("{variant}", "{seed}", "{lang}"),
    wildcard_constraints:
        **LNSP_WILDCARDS,
    log:
        **logs("lnsp", "train_teacher", "{variant}/s{seed}/{lang}"),
    benchmark:
        bench("lnsp", "train_teacher", "{variant}/s{seed}/{lang}")
    threads: 1
    resources:
        **measured("lnsp_train_teacher"),
    shell:
        step("papers.lnsp.train_teacher",
             "--language {wildcards.lang} --variant {wildcards.variant} --seed {wildcards.seed} "
             "--out {output.model:q} --summary {output.summary:q}")


rule lnsp_extract:  # one job per seed: every teacher of it (both variants) in turn, a few seconds each
    input:
        teachers=lambda wildcards: lnsp_plan.extract_inputs(LNSP, wildcards.seed),
        stamp=stamp("papers.lnsp.extract"),  # + the plan
    output:
        lnsp_plan.extract_path("{seed}"),
    log:
        **logs("lnsp", "extract", "s{seed}"),
    benchmark:
        bench("lnsp", "extract", "s{seed}")
    threads: 1
    resources:
        **measured("lnsp_extract"),
    shell:
        step("papers.lnsp.extract", "--seed {wildcards.seed} --out {output:q}")


rule lnsp_evaluate:
    input:
        exact=lnsp_plan.exact_paths(LNSP),
        extract=lnsp_plan.extract_paths(LNSP),
        claims="workflow/papers/lnsp/claims.yaml",
        stamp=stamp("papers.lnsp.evaluate"),  # the plan: which runs exist (the step finds their files through it)
    output:
        table=lnsp_plan.out_path("table_main.csv"),
        exact=lnsp_plan.out_path("exact_runs.csv"),
        teachers=lnsp_plan.out_path("teachers.csv"),
        mined=lnsp_plan.out_path("mined_errors.csv"),
        claims=lnsp_plan.out_path("claims.json"),
    log:
        **logs("lnsp", "evaluate"),
    benchmark:
        bench("lnsp", "evaluate")
    threads: 1
    resources:
        **measured("lnsp_evaluate"),
    shell:
        step("papers.lnsp.evaluate",
             "--table {output.table:q} --exact-table {output.exact:q} "
             "--teachers {output.teachers:q} --mined {output.mined:q} --claims {output.claims:q}")


rule lnsp_plot:
    input:
        table=lnsp_plan.out_path("table_main.csv"),
        exact=lnsp_plan.out_path("exact_runs.csv"),
        stamp=stamp("papers.lnsp.plot"),
    output:
        LNSP_FIGURES,
    log:
        **logs("lnsp", "plot"),
    benchmark:
        bench("lnsp", "plot")
    threads: 1
    resources:
        **measured("lnsp_plot"),
    shell:
        step("papers.lnsp.plot", "--table {input.table:q} --exact-table {input.exact:q} --figures {output:q}")
