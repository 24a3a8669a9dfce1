# COSA: test-time adaptation of frozen forecasters (spec: shared/papers/cosa.md)
# data sets -> frozen base per (data set, base, horizon, seed) -> TTA stream of every method -> table + claims -> figures
# A seed is one unit of the pipeline: the generator's data (synthetic sets), the base's training, the adapters' init.
localrules: cosa, cosa_evaluate, cosa_plot


from workflow.papers.cosa import plan as cosa_plan

COSA_DATASETS = PARAMS["cosa"]["datasets"]
COSA_WILDCARDS = dict(base="dlinear|mlp", H="[0-9]+")
FIGURES["cosa"] = COSA_FIGURES = cosa_plan.figure_paths()


rule cosa:
    input:
        "results/cosa/tracking.json",  # claims, figures, and every job logged to MLflow
        cosa_plan.out_path("claims.json"),
        COSA_FIGURES,


rule cosa_prepare:
    input:
        raw=lambda wildcards: cosa_plan.raw_files(COSA_DATASETS, wildcards.dataset),
        stamp=stamp("papers.cosa.prepare"),
    output:
        cosa_plan.data_path("{dataset}", "{seed}"),
    log:
        **logs("cosa", "prepare", "{dataset}_s{seed}"),
    benchmark:
        bench("cosa", "prepare", "{dataset}_s{seed}")
    threads: 1
    resources:
        **measured("cosa_prepare"),
    shell:
        step("papers.cosa.prepare", "--raw={input.raw:q} --seed {wildcards.seed} --out {output:q}")


rule cosa_train_base:
    input:
        data=cosa_plan.data_path("{dataset}", "{seed}"),
        stamp=stamp("papers.cosa.train_base"),
    output:
        model=cosa_plan.base_path("{dataset}", "{base}", "{H}", "{seed}"),
        summary=cosa_plan.base_path("{dataset}", "{base}", "{H}", "{seed}", "json"),
    wildcard_constraints:
        **COSA_WILDCARDS,
    log:
        **logs("cosa", "train_base", "{dataset}/{base}_H{H}_s{seed}"),
    benchmark:
        bench("cosa", "train_base", "{dataset}/{base}_H{H}_s{seed}")
    threads: 1
    resources:
        **measured("cosa_train_base"),
    shell:
        step("papers.cosa.train_base",
             "--data {input.data:q} --base {wildcards.base} --horizon {wildcards.H} --seed {wildcards.seed} "
             "--out {output.model:q} --summary {output.summary:q}")


rule cosa_tta:
    input:
        data=cosa_plan.data_path("{dataset}", "{seed}"),
        base=cosa_plan.base_path("{dataset}", "{base}", "{H}", "{seed}"),
        stamp=stamp("papers.cosa.tta"),
    output:
        summary=cosa_plan.tta_path("{dataset}", "{base}", "{H}", "{seed}"),
        traces=cosa_plan.tta_path("{dataset}", "{base}", "{H}", "{seed}", "npz"),
    wildcard_constraints:
        **COSA_WILDCARDS,
    log:
        **logs("cosa", "tta", "{dataset}/{base}_H{H}_s{seed}"),
    benchmark:
        bench("cosa", "tta", "{dataset}/{base}_H{H}_s{seed}")
    threads: 1
    resources:
        **measured("cosa_tta"),
    shell:
        step("papers.cosa.tta",
             "--data {input.data:q} --base {input.base:q} --horizon {wildcards.H} --seed {wildcards.seed} "
             "--out {output.summary:q} --traces {output.traces:q}")


rule cosa_evaluate:
    input:
        cells=cosa_plan.tta_paths(COSA_DATASETS),
        traces=cosa_plan.trace_path(COSA_DATASETS),  # the cell Figs. B/C follow
        claims="workflow/papers/cosa/claims.yaml",
        stamp=stamp("papers.cosa.evaluate"),  # the plan: which cells exist
    output:
        table=cosa_plan.out_path("table.csv"),
        stream=cosa_plan.out_path("stream.csv"),
        claims=cosa_plan.out_path("claims.json"),
    log:
        **logs("cosa", "evaluate"),
    benchmark:
        bench("cosa", "evaluate")
    threads: 1
    resources:
        **measured("cosa_evaluate"),
    shell:
        step("papers.cosa.evaluate",
             "--table {output.table:q} --stream {output.stream:q} --claims {output.claims:q}")


rule cosa_plot:
    input:
        table=cosa_plan.out_path("table.csv"),
        stream=cosa_plan.out_path("stream.csv"),
        stamp=stamp("papers.cosa.plot"),
    output:
        main_table=cosa_plan.out_path("main_table.csv"),
        figures=COSA_FIGURES,
    log:
        **logs("cosa", "plot"),
    benchmark:
        bench("cosa", "plot")
    threads: 1
    resources:
        **measured("cosa_plot"),
    shell:
        step("papers.cosa.plot",
             "--table {input.table:q} --stream {input.stream:q} --main-table {output.main_table:q} --figures {output.figures:q}")
