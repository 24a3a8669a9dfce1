# ReFusion: slot-level plan-and-infill decoding with KV reuse (spec: shared/papers/refusion.md).
# problems -> ARM, MDM and ReFusion per seed (trained once each) -> every decoder per seed -> claims -> figures
localrules: refusion, refusion_evaluate, refusion_plot


from workflow.papers.refusion import plan as refusion_plan

REFUSION = PARAMS["refusion"]
check_plan(refusion_plan, REFUSION)
FIGURES["refusion"] = REFUSION_FIGURES = refusion_plan.figure_paths()


rule refusion:
    input:
        "results/refusion/tracking.json",  # claims, figures, and every job logged to MLflow
        refusion_plan.out_path("claims.json"),
        REFUSION_FIGURES,


rule refusion_data:
    input:
        stamp=stamp("papers.refusion.data"),
    output:
        refusion_plan.problems_path(),
    log:
        **logs("refusion", "data"),
    benchmark:
        bench("refusion", "data")
    threads: 1
    resources:
        **measured("refusion_data"),
    shell:
        step("papers.refusion.data", "--out {output:q}")


rule refusion_train:
    input:
        problems=refusion_plan.problems_path(),
        stamp=stamp("papers.refusion.train"),
    output:
        refusion_plan.model_path("{model}", "{seed}"),
    wildcard_constraints:
        model="|".join(refusion_plan.MODELS),
    log:
        **logs("refusion", "train", "{model}/s{seed}"),
    benchmark:
        bench("refusion", "train", "{model}/s{seed}")
    threads: 1
    resources:
        **measured("refusion_train"),
    shell:
        step("papers.refusion.train",
             "--problems {input.problems:q} --model {wildcards.model} --seed {wildcards.seed} --out {output:q}")


rule refusion_decode:
    input:
        problems=refusion_plan.problems_path(),
        models=[refusion_plan.model_path(kind, "{seed}") for kind in refusion_plan.MODELS],  # found by plan.model_path
        stamp=stamp("papers.refusion.decode"),
    output:
        decodes=refusion_plan.decodes_path("{seed}"),
        speed=refusion_plan.speed_path("{seed}"),
    log:
        **logs("refusion", "decode", "s{seed}"),
    benchmark:
        bench("refusion", "decode", "s{seed}")
    threads: 1
    resources:
        **measured("refusion_decode"),
    shell:
        step("papers.refusion.decode",
             "--problems {input.problems:q} --seed {wildcards.seed} --out {output.decodes:q} --speed {output.speed:q}")


rule refusion_evaluate:
    input:
        decodes=refusion_plan.decodes_paths(REFUSION["plan"]),
        speed=refusion_plan.speed_paths(REFUSION["plan"]),
        claims="workflow/papers/refusion/claims.yaml",
        stamp=stamp("papers.refusion.evaluate"),  # the plan: which decodes exist
    output:
        table=refusion_plan.out_path("decoders.csv"),
        claims=refusion_plan.out_path("claims.json"),
    log:
        **logs("refusion", "evaluate"),
    benchmark:
        bench("refusion", "evaluate")
    threads: 1
    resources:
        **measured("refusion_evaluate"),
    shell:
        step("papers.refusion.evaluate", "--table {output.table:q} --claims {output.claims:q}")


rule refusion_plot:
    input:
        table=refusion_plan.out_path("decoders.csv"),
        stamp=stamp("papers.refusion.plot"),
    output:
        REFUSION_FIGURES,
    log:
        **logs("refusion", "plot"),
    benchmark:
        bench("refusion", "plot")
    threads: 1
    resources:
        **measured("refusion_plot"),
    shell:
        step("papers.refusion.plot", "--table {input.table:q} --figures {output:q}")
