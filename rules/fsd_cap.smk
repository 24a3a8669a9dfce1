# FSD-CAP: fractional subgraph diffusion + class-aware propagation for 99.5 %-missing node features
# (spec: shared/papers/fsd_cap.md). graphs (CSBM, heterophilous CSBM, kNN graph of real digits) ->
# one job per (graph, seed): every planned method imputes, then GCN node classification (+ GAE link prediction)
# -> claims (with their controls) -> figures
localrules: fsd_cap, fsd_cap_evaluate, fsd_cap_plot


from workflow.papers.fsd_cap import plan as fsd_plan

FSD = PARAMS["fsd_cap"]
FIGURES["fsd_cap"] = FSD_FIGURES = fsd_plan.figure_paths()


rule fsd_cap:
    input:
        "results/fsd_cap/tracking.json",  # claims, figures, and every job logged to MLflow
        fsd_plan.out_path("claims.json"),
        FSD_FIGURES,


rule fsd_cap_data:
    input:
        raw=lambda wildcards: fsd_plan.raw_files(FSD["datasets"], wildcards.dataset),
        stamp=stamp("papers.fsd_cap.data"),
    output:
        fsd_plan.data_path("{dataset}"),
    log:
        **logs("fsd_cap", "data", "{dataset}"),
    benchmark:
        bench("fsd_cap", "data", "{dataset}")
    threads: 1
    resources:
        **measured("fsd_cap_data"),
    shell:
        step("papers.fsd_cap.data", "--raw {input.raw:q} --out {output:q}")


rule fsd_cap_run:
    input:
        data=fsd_plan.data_path("{dataset}"),
        stamp=stamp("papers.fsd_cap.run"),
    output:
        fsd_plan.run_path("{dataset}", "{seed}"),
    log:
        **logs("fsd_cap", "run", "{dataset}/s{seed}"),
    benchmark:
        bench("fsd_cap", "run", "{dataset}/s{seed}")
    threads: 1
    resources:
        **measured("fsd_cap_run"),
    shell:
        step("papers.fsd_cap.run",
             "--data {input.data:q} --dataset {wildcards.dataset} --seed {wildcards.seed} --out {output:q}")


rule fsd_cap_evaluate:
    input:
        runs=fsd_plan.run_paths(FSD["plan"]),
        claims="workflow/papers/fsd_cap/claims.yaml",
        stamp=stamp("papers.fsd_cap.evaluate"),  # the plan: which runs exist
    output:
        table=fsd_plan.out_path("metrics.csv"),
        main=fsd_plan.out_path("main_table.csv"),
        claims=fsd_plan.out_path("claims.json"),
    log:
        **logs("fsd_cap", "evaluate"),
    benchmark:
        bench("fsd_cap", "evaluate")
    threads: 1
    resources:
        **measured("fsd_cap_evaluate"),
    shell:
        step("papers.fsd_cap.evaluate",
             "--table {output.table:q} --main-table {output.main:q} --claims {output.claims:q}")


rule fsd_cap_plot:
    input:
        table=fsd_plan.out_path("metrics.csv"),
        stamp=stamp("papers.fsd_cap.plot"),
    output:
        FSD_FIGURES,
    log:
        **logs("fsd_cap", "plot"),
    benchmark:
        bench("fsd_cap", "plot")
    threads: 1
    resources:
        **measured("fsd_cap_plot"),
    shell:
        step("papers.fsd_cap.plot", "--table {input.table:q} --figures {output:q}")
