# SCSD: incomplete multi-view multi-label classification, shared codebook + fused-teacher self-distillation
# (spec: shared/papers/scsd.md). data set -> one job per cell (data set, missing-view rate, fold) running the cell's
# methods (workflow/papers/scsd/plan.py) -> claims -> figures
localrules: scsd, scsd_evaluate, scsd_plot


from workflow.papers.scsd import plan as scsd_plan

SCSD = PARAMS["scsd"]
SCSD_WILDCARDS = dict(rv="[0-9.]+")  # a missing-view rate
FIGURES["scsd"] = SCSD_FIGURES = scsd_plan.figure_paths()


rule scsd:
    input:
        "results/scsd/tracking.json",  # claims, figures, and every job logged to MLflow
        scsd_plan.out_path("claims.json"),
        SCSD_FIGURES,


rule scsd_prepare:
    input:
        raw=lambda wildcards: scsd_plan.raw_files(SCSD["datasets"], wildcards.dataset),
        stamp=stamp("papers.scsd.prepare"),
    output:
        scsd_plan.data_path("{dataset}"),
    log:
        **logs("scsd", "prepare", "{dataset}"),
    benchmark:
        bench("scsd", "prepare", "{dataset}")
    threads: 1
    resources:
        **measured("scsd_prepare"),
    shell:
        step("papers.scsd.prepare", "--raw {input.raw:q} --out {output:q}")


# one job per cell (data set, r_V, fold): every method the plan runs there, each seeded as if alone
rule scsd_train:
    input:
        data=scsd_plan.data_path("{dataset}"),
        stamp=stamp("papers.scsd.train",  # with the methods of this cell (the step finds them itself)
                    derived=lambda w: scsd_plan.cell_methods(SCSD["plan"], SCSD["datasets"], w.dataset, float(w.rv),
                                                             int(w.seed))),
    output:
        scsd_plan.cell_path("{dataset}", "{rv}", "{seed}"),
    wildcard_constraints:
        **SCSD_WILDCARDS,
    log:
        **logs("scsd", "train", "{dataset}/rv{rv}/s{seed}"),
    benchmark:
        bench("scsd", "train", "{dataset}/rv{rv}/s{seed}")
    threads: 1
    resources:
        **measured("scsd_train"),
    shell:
        step("papers.scsd.train",
             "--data {input.data:q} --dataset {wildcards.dataset} --missing-view {wildcards.rv} --seed {wildcards.seed} "
             "--out {output:q}")


rule scsd_evaluate:
    input:
        runs=scsd_plan.cell_paths(SCSD["plan"], SCSD["datasets"]),
        claims="workflow/papers/scsd/claims.yaml",
        stamp=stamp("papers.scsd.evaluate"),  # the plan: which cells exist
    output:
        table=scsd_plan.out_path("metrics.csv"),
        weights=scsd_plan.out_path("view_weights.csv"),
        claims=scsd_plan.out_path("claims.json"),
    log:
        **logs("scsd", "evaluate"),
    benchmark:
        bench("scsd", "evaluate")
    threads: 1
    resources:
        **measured("scsd_evaluate"),
    shell:
        step("papers.scsd.evaluate",
             "--table {output.table:q} --weights {output.weights:q} --claims {output.claims:q}")


rule scsd_plot:
    input:
        table=scsd_plan.out_path("metrics.csv"),
        weights=scsd_plan.out_path("view_weights.csv"),
        graphs=scsd_plan.graphs_cell(SCSD["plan"], SCSD["datasets"]),
        stamp=stamp("papers.scsd.plot"),
    output:
        main_table=scsd_plan.out_path("main_table.csv"),
        figures=SCSD_FIGURES,
    log:
        **logs("scsd", "plot"),
    benchmark:
        bench("scsd", "plot")
    threads: 1
    resources:
        **measured("scsd_plot"),
    shell:
        step("papers.scsd.plot",
             "--table {input.table:q} --weights {input.weights:q} --graphs {input.graphs:q} "
             "--main-table {output.main_table:q} --figures {output.figures:q}")
