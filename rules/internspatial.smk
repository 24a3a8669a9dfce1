# InternSpatial: a spatial-reasoning QA data engine with 19 instruction formats (spec: shared/papers/internspatial.md)
# rendered scenes and their QA -> one vision encoder per seed, pretrained on the renderer's labels -> one small VLM
# per (training regime | control, seed) on it, asked the held-out scenes in every format -> claims -> tables, format
# heat-map and QA cards
localrules: internspatial, internspatial_evaluate, internspatial_plot


from workflow.papers.internspatial import plan as internspatial_plan

INTERNSPATIAL = PARAMS["internspatial"]
check_plan(internspatial_plan, INTERNSPATIAL)
FIGURES["internspatial"] = INTERNSPATIAL_FIGURES = internspatial_plan.figure_paths()


rule internspatial:
    input:
        "results/internspatial/tracking.json",  # claims, figures, and every job logged to MLflow
        internspatial_plan.out_path("claims.json"),
        INTERNSPATIAL_FIGURES,


rule internspatial_data:
    input:
        stamp=stamp("papers.internspatial.data"),
    output:
        images=internspatial_plan.images_path(),
        qa=internspatial_plan.qa_path(),
    log:
        **logs("internspatial", "data"),
    benchmark:
        bench("internspatial", "data")
    threads: 1
    resources:
        **measured("internspatial_data"),
    shell:
        step("papers.internspatial.data", "--images {output.images:q} --qa {output.qa:q}")


rule internspatial_encoder:
    input:
        images=internspatial_plan.images_path(),
        qa=internspatial_plan.qa_path(),
        stamp=stamp("papers.internspatial.encoder"),
    output:
        internspatial_plan.encoder_path("{seed}"),
    log:
        **logs("internspatial", "encoder", "s{seed}"),
    benchmark:
        bench("internspatial", "encoder", "s{seed}")
    threads: 1
    resources:
        **measured("internspatial_encoder"),
    shell:
        step("papers.internspatial.encoder", "--images {input.images:q} --qa {input.qa:q} --seed {wildcards.seed} "
             "--out {output:q}")


rule internspatial_train:
    input:
        images=internspatial_plan.images_path(),
        qa=internspatial_plan.qa_path(),
        encoder=internspatial_plan.encoder_path("{seed}"),
        stamp=stamp("papers.internspatial.train"),
    output:
        internspatial_plan.run_path("{internspatial_regime}", "{seed}"),
    wildcard_constraints:
        internspatial_regime="m[0-9](?:_[a-z]+)?",
    log:
        **logs("internspatial", "train", "{internspatial_regime}_s{seed}"),
    benchmark:
        bench("internspatial", "train", "{internspatial_regime}_s{seed}")
    threads: 1
    resources:
        **measured("internspatial_train"),
    shell:
        step("papers.internspatial.train",
             "--images {input.images:q} --qa {input.qa:q} --encoder {input.encoder:q} "
             "--regime {wildcards.internspatial_regime} "
             "--seed {wildcards.seed} --out {output:q}")


rule internspatial_evaluate:
    input:
        runs=internspatial_plan.run_paths(INTERNSPATIAL["plan"]),
        qa=internspatial_plan.qa_path(),
        claims="workflow/papers/internspatial/claims.yaml",
        stamp=stamp("papers.internspatial.evaluate"),  # the plan: which runs exist
    output:
        table=internspatial_plan.out_path("scores.csv"),
        claims=internspatial_plan.out_path("claims.json"),
    log:
        **logs("internspatial", "evaluate"),
    benchmark:
        bench("internspatial", "evaluate")
    threads: 1
    resources:
        **measured("internspatial_evaluate"),
    shell:
        step("papers.internspatial.evaluate", "--table {output.table:q} --claims {output.claims:q}")


rule internspatial_plot:
    input:
        runs=internspatial_plan.run_paths(INTERNSPATIAL["plan"]),
        images=internspatial_plan.images_path(),
        qa=internspatial_plan.qa_path(),
        stamp=stamp("papers.internspatial.plot"),
    output:
        INTERNSPATIAL_FIGURES,
    log:
        **logs("internspatial", "plot"),
    benchmark:
        bench("internspatial", "plot")
    threads: 1
    resources:
        **measured("internspatial_plot"),
    shell:
        step("papers.internspatial.plot", "--images {input.images:q} --figures {output:q}")
