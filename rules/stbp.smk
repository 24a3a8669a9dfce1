# STBP: continual spatio-temporal forecasting with a frozen backbone + scalable pattern bank (spec: shared/papers/stbp.md)
# yearly tasks per data set -> each (method, seed) run through every year in order -> tables + claims -> figures
localrules: stbp, stbp_evaluate, stbp_plot


from workflow.papers.stbp import plan as stbp_plan

STBP_PLAN = PARAMS["stbp"]["plan"]
STBP_WILDCARDS = dict(stbp_method="[a-z_]+")
FIGURES["stbp"] = STBP_FIGURES = stbp_plan.figure_paths()


rule stbp:
    input:
        "results/stbp/tracking.json",  # claims, figures, and every job logged to MLflow
        stbp_plan.out_path("claims.json"),
        STBP_FIGURES,


rule stbp_data:
    input:
        raw=lambda wildcards: stbp_plan.raw_files(wildcards.dataset),
        stamp=stamp("papers.stbp.data"),
    output:
        stbp_plan.out_path("data/{dataset}.npz"),
    log:
        **logs("stbp", "data", "{dataset}"),
    benchmark:
        bench("stbp", "data", "{dataset}")
    threads: 1
    resources:
        **measured("stbp_data"),
    shell:
        step("papers.stbp.data", "{wildcards.dataset} --raw={input.raw:q} --out {output:q}")


rule stbp_train:
    input:
        data=stbp_plan.out_path("data/{dataset}.npz"),
        stamp=stamp("papers.stbp.train"),
    output:
        stbp_plan.out_path("runs/{dataset}/{stbp_method}_s{seed}.json"),
    wildcard_constraints:
        **STBP_WILDCARDS,
    log:
        **logs("stbp", "train", "{dataset}/{stbp_method}_s{seed}"),
    benchmark:
        bench("stbp", "train", "{dataset}/{stbp_method}_s{seed}")
    threads: 1
    resources:
        **measured("stbp_train"),
    shell:
        step("papers.stbp.train", "--data {input.data:q} --dataset {wildcards.dataset} --method {wildcards.stbp_method} "
             "--seed {wildcards.seed} --out {output:q}")


rule stbp_evaluate:
    input:
        runs=stbp_plan.run_paths(STBP_PLAN),
        claims="workflow/papers/stbp/claims.yaml",
        stamp=stamp("papers.stbp.evaluate"),  # the plan: which runs exist
    output:
        years=stbp_plan.out_path("years.csv"),
        table=stbp_plan.out_path("table.csv"),
        backward=stbp_plan.out_path("backward.csv"),
        claims=stbp_plan.out_path("claims.json"),
    log:
        **logs("stbp", "evaluate"),
    benchmark:
        bench("stbp", "evaluate")
    threads: 1
    resources:
        **measured("stbp_evaluate"),
    shell:
        step("papers.stbp.evaluate",
             "--years {output.years:q} --table {output.table:q} --backward {output.backward:q} --claims {output.claims:q}")


rule stbp_plot:
    input:
        years=stbp_plan.out_path("years.csv"),
        table=stbp_plan.out_path("table.csv"),
        stamp=stamp("papers.stbp.plot"),
    output:
        STBP_FIGURES,
    log:
        **logs("stbp", "plot"),
    benchmark:
        bench("stbp", "plot")
    threads: 1
    resources:
        **measured("stbp_plot"),
    shell:
        step("papers.stbp.plot", "--years {input.years:q} --table {input.table:q} --figures {output:q}")
