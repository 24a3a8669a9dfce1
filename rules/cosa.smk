# COSA: test-time adaptation of frozen forecasters (spec: shared/papers/cosa.md)
# data sets -> frozen base per (data set, base, horizon, seed) -> TTA stream of every method -> table + claims -> figures
# A seed is one unit of the pipeline: the generator's data (synthetic sets), the base's training, the adapters' init.
localrules: cosa, cosa_evaluate, cosa_plot


from workflow.papers.cosa import plan as cosa_plan

COSA_DATASETS = PARAMS["cosa"]["datasets"]
COSA_OUT = cosa_plan.OUT
COSA_WILDCARDS = dict(base="dlinear|mlp", H="[0-9]+")
FIGURES["cosa"] = COSA_FIGURES = expand(f"{COSA_OUT}/figures/{{fig}}.png", fig=["table_rel_improvement", "gain_vs_horizon", "stream_mse", "gate"])


rule cosa:
    input:
        "results/cosa/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{COSA_OUT}/claims.json",
        COSA_FIGURES,


rule cosa_prepare:
    input:
        raw=lambda wildcards: cosa_plan.raw_files(COSA_DATASETS, wildcards.dataset),
        code=code("cosa", "prepare"),
        params=reads("cosa.datasets.{dataset}.source", "cosa.datasets.{dataset}.length", "cosa.generator", "cosa.split"),
    output:
        f"{COSA_OUT}/data/{{dataset}}_s{{seed}}.npz",
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
        data=f"{COSA_OUT}/data/{{dataset}}_s{{seed}}.npz",
        code=code("cosa", "train_base"),
        params=reads("cosa.datasets.{dataset}.lookback", "cosa.base"),
    output:
        model=f"{COSA_OUT}/base/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.pt",
        summary=f"{COSA_OUT}/base/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.json",
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
        data=f"{COSA_OUT}/data/{{dataset}}_s{{seed}}.npz",
        base=f"{COSA_OUT}/base/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.pt",
        code=code("cosa", "tta"),
        params=reads("cosa.datasets.{dataset}.lookback", "cosa.tta"),
    output:
        summary=f"{COSA_OUT}/tta/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.json",
        traces=f"{COSA_OUT}/tta/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.npz",
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
        code=code("cosa", "evaluate"),
        params=reads("cosa.datasets"),  # the plan: which cells exist
    output:
        table=f"{COSA_OUT}/table.csv",
        stream=f"{COSA_OUT}/stream.csv",
        claims=f"{COSA_OUT}/claims.json",
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
        table=f"{COSA_OUT}/table.csv",
        stream=f"{COSA_OUT}/stream.csv",
        code=code("cosa", "plot"),
        params=reads(),
    output:
        main_table=f"{COSA_OUT}/main_table.csv",
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
