# L*_nsp: automata learning in the next-symbol-prediction setting (spec: shared/papers/lnsp.md)
# exact-teacher runs per seed, with their controls (C1, C4) + Transformer teacher per (variant, seed, language)
# -> extraction, classic L* and C5's control (C2, C3, C5) -> main table + claims -> figures
LNSP = PARAMS["lnsp"]
LNSP_OUT = "results/lnsp"
FIGURES["lnsp"] = LNSP_FIGURES = expand(f"{LNSP_OUT}/figures/{{fig}}.png", fig=["table_main", "dyck_samples"])
LNSP_TEACHERS = [(variant, seed, lang) for variant, langs in (("full", LNSP["teachers"]), ("weak", LNSP["weak_teachers"]))
                 for seed in LNSP["variants"][variant]["seeds"] for lang in langs]


wildcard_constraints:
    variant="full|weak",
    lang="[a-z0-9_]+",


rule lnsp:
    input:
        "results/lnsp/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{LNSP_OUT}/claims.json",
        LNSP_FIGURES,


rule lnsp_exact:
    input:
        code=code("lnsp", "exact"),
    output:
        f"{LNSP_OUT}/exact/s{{seed}}.csv",
    params:
        **reads("lnsp.exact", "lnsp.learners"),
    log:
        **logs("lnsp", "exact", "s{seed}"),
    benchmark:
        bench("lnsp", "exact", "s{seed}")
    threads: 1
    shell:
        step("papers.lnsp.exact", "--seed {wildcards.seed} --out {output:q}")


rule lnsp_train_teacher:
    input:
        code=code("lnsp", "train_teacher"),
    output:
        model=f"{LNSP_OUT}/teachers/{{variant}}/s{{seed}}/{{lang}}.pt",
        summary=f"{LNSP_OUT}/teachers/{{variant}}/s{{seed}}/{{lang}}.json",
    params:
        **reads("lnsp.teacher", "lnsp.variants.{variant}"),
    log:
        **logs("lnsp", "train_teacher", "{variant}/s{seed}/{lang}"),
    benchmark:
        bench("lnsp", "train_teacher", "{variant}/s{seed}/{lang}")
    threads: 1
    shell:
        step("papers.lnsp.train_teacher",
             "--language {wildcards.lang} --variant {wildcards.variant} --seed {wildcards.seed} "
             "--out {output.model:q} --summary {output.summary:q}")


rule lnsp_extract:
    input:
        model=f"{LNSP_OUT}/teachers/{{variant}}/s{{seed}}/{{lang}}.pt",
        summary=f"{LNSP_OUT}/teachers/{{variant}}/s{{seed}}/{{lang}}.json",
        code=code("lnsp", "extract"),
    output:
        f"{LNSP_OUT}/extract/{{variant}}/s{{seed}}/{{lang}}.json",
    params:
        **reads("lnsp.extract", "lnsp.learners"),
    log:
        **logs("lnsp", "extract", "{variant}/s{seed}/{lang}"),
    benchmark:
        bench("lnsp", "extract", "{variant}/s{seed}/{lang}")
    threads: 1
    shell:
        step("papers.lnsp.extract",
             "--teacher {input.model:q} --summary {input.summary:q} --seed {wildcards.seed} --out {output:q}")


rule lnsp_evaluate:
    input:
        exact=expand(f"{LNSP_OUT}/exact/s{{seed}}.csv", seed=LNSP["seeds"]),
        extract=[f"{LNSP_OUT}/extract/{v}/s{seed}/{lang}.json" for v, seed, lang in LNSP_TEACHERS],
        claims="workflow/papers/lnsp/claims.yaml",
        code=code("lnsp", "evaluate"),
    output:
        table=f"{LNSP_OUT}/table_main.csv",
        exact=f"{LNSP_OUT}/exact_runs.csv",
        teachers=f"{LNSP_OUT}/teachers.csv",
        mined=f"{LNSP_OUT}/mined_errors.csv",
        claims=f"{LNSP_OUT}/claims.json",
    params:
        **reads(),
    log:
        **logs("lnsp", "evaluate"),
    benchmark:
        bench("lnsp", "evaluate")
    threads: 1
    shell:
        step("papers.lnsp.evaluate",
             "--exact {input.exact:q} --extract {input.extract:q} --table {output.table:q} --exact-table {output.exact:q} "
             "--teachers {output.teachers:q} --mined {output.mined:q} --claims {output.claims:q}")


rule lnsp_plot:
    input:
        table=f"{LNSP_OUT}/table_main.csv",
        exact=f"{LNSP_OUT}/exact_runs.csv",
        code=code("lnsp", "plot"),
    output:
        LNSP_FIGURES,
    params:
        **reads(),
    log:
        **logs("lnsp", "plot"),
    benchmark:
        bench("lnsp", "plot")
    threads: 1
    shell:
        step("papers.lnsp.plot", "--table {input.table:q} --exact-table {input.exact:q} --figures {output:q}")
