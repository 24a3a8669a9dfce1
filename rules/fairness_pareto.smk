# Rethinking Pareto frontier: optimal trade-offs in fair classification (spec: shared/papers/fairness_pareto.md)
# raw Adult/COMPAS -> base MLP per (data set, seed) -> frontiers (cvxpy LPs) and the intervention families per
# (data set, seed) -> claims -> figures mirroring the paper's Figs. 2-4 and its table
localrules: fairness_pareto, fairness_pareto_evaluate, fairness_pareto_plot


from workflow.papers.fairness_pareto import plan as fp_plan

FP = PARAMS["fairness_pareto"]
FP_CELL = fp_plan.cell_files("{dataset}", "{seed}")  # one (data set, seed) cell's files, as wildcard patterns
FP_WILDCARDS = dict(dataset="|".join(FP["datasets"]), seed="[0-9]+")
FIGURES["fairness_pareto"] = FP_FIGURES = fp_plan.figure_paths()


rule fairness_pareto:
    input:
        "results/fairness_pareto/tracking.json",  # claims, figures, and every job logged to MLflow
        fp_plan.out_path("claims.json"),
        FP_FIGURES,


rule fairness_pareto_train_base:
    input:
        raw=lambda wildcards: fp_plan.raw_files(FP["datasets"][wildcards.dataset]["source"]),
        stamp=stamp("papers.fairness_pareto.train_base"),
    output:
        features=FP_CELL["features"],
        model=FP_CELL["model"],
        summary=FP_CELL["base"],
    wildcard_constraints:
        **FP_WILDCARDS,
    log:
        **logs("fairness_pareto", "train_base", "{dataset}_s{seed}"),
    benchmark:
        bench("fairness_pareto", "train_base", "{dataset}_s{seed}")
    threads: 1
    resources:
        **measured("fairness_pareto_train_base"),
    shell:
        step("papers.fairness_pareto.train_base",
             "--raw {input.raw:q} --seed {wildcards.seed} --features {output.features:q} --model {output.model:q} --summary {output.summary:q}")


rule fairness_pareto_frontiers:
    input:
        features=FP_CELL["features"],
        base=FP_CELL["base"],
        stamp=stamp("papers.fairness_pareto.frontiers"),
    output:
        frontiers=FP_CELL["frontiers"],
        fairfair=FP_CELL["fairfair"],
        summary=FP_CELL["summary"],
        control=FP_CELL["control"],
    wildcard_constraints:
        **FP_WILDCARDS,
    log:
        **logs("fairness_pareto", "frontiers", "{dataset}_s{seed}"),
    benchmark:
        bench("fairness_pareto", "frontiers", "{dataset}_s{seed}")
    threads: 1
    resources:
        **measured("fairness_pareto_frontiers"),
    shell:
        step("papers.fairness_pareto.frontiers",
             "--features {input.features:q} --base {input.base:q} --frontiers {output.frontiers:q} --fairfair {output.fairfair:q} "
             "--summary {output.summary:q} --control {output.control:q}")


rule fairness_pareto_interventions:  # one job per (data set, seed): every family in turn (each a few seconds)
    input:
        features=FP_CELL["features"],
        base=FP_CELL["base"],
        stamp=stamp("papers.fairness_pareto.interventions"),
    output:
        FP_CELL["points"],
    wildcard_constraints:
        **FP_WILDCARDS,
    log:
        **logs("fairness_pareto", "interventions", "{dataset}_s{seed}"),
    benchmark:
        bench("fairness_pareto", "interventions", "{dataset}_s{seed}")
    threads: 1
    resources:
        **measured("fairness_pareto_interventions"),
    shell:
        step("papers.fairness_pareto.interventions",
             "--features {input.features:q} --base {input.base:q} --seed {wildcards.seed} --out {output:q}")


rule fairness_pareto_evaluate:
    input:
        frontiers=fp_plan.paths(FP["plan"], "frontiers"),
        fairfair=fp_plan.paths(FP["plan"], "fairfair"),
        summaries=fp_plan.paths(FP["plan"], "summary"),
        points=fp_plan.paths(FP["plan"], "points"),
        controls=fp_plan.paths(FP["plan"], "control"),
        claims="workflow/papers/fairness_pareto/claims.yaml",
        stamp=stamp("papers.fairness_pareto.evaluate"),  # the plan: which cells exist (the step finds their files through it)
    output:
        frontiers=fp_plan.out_path("frontiers.csv"),
        fairfair=fp_plan.out_path("fairfair.csv"),
        points=fp_plan.out_path("points.csv"),
        cells=fp_plan.out_path("cells.csv"),
        claims=fp_plan.out_path("claims.json"),
    log:
        **logs("fairness_pareto", "evaluate"),
    benchmark:
        bench("fairness_pareto", "evaluate")
    threads: 1
    resources:
        **measured("fairness_pareto_evaluate"),
    shell:
        step("papers.fairness_pareto.evaluate",
             "--out-frontiers {output.frontiers:q} --out-fairfair {output.fairfair:q} --out-points {output.points:q} "
             "--out-cells {output.cells:q} --claims {output.claims:q}")


rule fairness_pareto_plot:
    input:
        frontiers=fp_plan.out_path("frontiers.csv"),
        fairfair=fp_plan.out_path("fairfair.csv"),
        points=fp_plan.out_path("points.csv"),
        cells=fp_plan.out_path("cells.csv"),
        stamp=stamp("papers.fairness_pareto.plot"),
    output:
        table=fp_plan.out_path("table_eod_optimal.csv"),
        figures=FP_FIGURES,
    log:
        **logs("fairness_pareto", "plot"),
    benchmark:
        bench("fairness_pareto", "plot")
    threads: 1
    resources:
        **measured("fairness_pareto_plot"),
    shell:
        step("papers.fairness_pareto.plot",
             "--frontiers {input.frontiers:q} --fairfair {input.fairfair:q} --points {input.points:q} --cells {input.cells:q} "
             "--table {output.table:q} --figures {output.figures:q}")
