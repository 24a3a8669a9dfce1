# COSA: test-time adaptation of frozen forecasters (spec: shared/papers/cosa.md)
# data sets -> frozen base per (data set, base, horizon, seed) -> TTA stream of every method -> table + claims -> figures
# A seed is one unit of the pipeline: the generator's data (synthetic sets), the base's training, the adapters' init.
COSA = PARAMS["cosa"]
COSA_OUT = "results/cosa"
FIGURES["cosa"] = COSA_FIGURES = expand(f"{COSA_OUT}/figures/{{fig}}.png", fig=["table_rel_improvement", "gain_vs_horizon", "stream_mse", "gate"])
COSA_CELLS = [(ds, base, h, s) for ds, d in COSA["datasets"].items() for base in d["bases"] for h in d["horizons"]
              for s in d["seeds"]]
# Figs. B/C follow the first ett_like cell at its longest horizon, first seed (the spec's headline setting).
COSA_TRACE = next(f"{COSA_OUT}/tta/{ds}/{b}_H{h}_s{s}.npz"
                  for ds, b, h, s in sorted(COSA_CELLS, key=lambda c: (c[0] != "ett_like", -c[2], c[1], c[3])))


def cosa_raw(wildcards):
    """Catalog file of a real data set; generators need none."""
    source = COSA["datasets"][wildcards.dataset]["source"]
    return [] if source.startswith("ett_like") else [f"data/raw/{source}.csv"]


wildcard_constraints:
    base="dlinear|mlp",
    H="[0-9]+",


rule cosa:
    input:
        "results/cosa/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{COSA_OUT}/claims.json",
        COSA_FIGURES,


rule cosa_prepare:
    input:
        raw=cosa_raw,
        code=code("cosa", "prepare"),
    output:
        f"{COSA_OUT}/data/{{dataset}}_s{{seed}}.npz",
    params:
        **reads("cosa.datasets.{dataset}.source", "cosa.datasets.{dataset}.length", "cosa.generator", "cosa.split"),
    log:
        **logs("cosa", "prepare", "{dataset}_s{seed}"),
    benchmark:
        bench("cosa", "prepare", "{dataset}_s{seed}")
    threads: 1
    shell:
        step("papers.cosa.prepare", "--raw={input.raw:q} --seed {wildcards.seed} --out {output:q}")


rule cosa_train_base:
    input:
        data=f"{COSA_OUT}/data/{{dataset}}_s{{seed}}.npz",
        code=code("cosa", "train_base"),
    output:
        model=f"{COSA_OUT}/base/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.pt",
        summary=f"{COSA_OUT}/base/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.json",
    params:
        **reads("cosa.datasets.{dataset}.lookback", "cosa.base"),
    log:
        **logs("cosa", "train_base", "{dataset}/{base}_H{H}_s{seed}"),
    benchmark:
        bench("cosa", "train_base", "{dataset}/{base}_H{H}_s{seed}")
    threads: 1
    shell:
        step("papers.cosa.train_base",
             "--data {input.data:q} --base {wildcards.base} --horizon {wildcards.H} --seed {wildcards.seed} "
             "--out {output.model:q} --summary {output.summary:q}")


rule cosa_tta:
    input:
        data=f"{COSA_OUT}/data/{{dataset}}_s{{seed}}.npz",
        base=f"{COSA_OUT}/base/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.pt",
        code=code("cosa", "tta"),
    output:
        summary=f"{COSA_OUT}/tta/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.json",
        traces=f"{COSA_OUT}/tta/{{dataset}}/{{base}}_H{{H}}_s{{seed}}.npz",
    params:
        **reads("cosa.datasets.{dataset}.lookback", "cosa.tta"),
    log:
        **logs("cosa", "tta", "{dataset}/{base}_H{H}_s{seed}"),
    benchmark:
        bench("cosa", "tta", "{dataset}/{base}_H{H}_s{seed}")
    threads: 1
    shell:
        step("papers.cosa.tta",
             "--data {input.data:q} --base {input.base:q} --horizon {wildcards.H} --seed {wildcards.seed} "
             "--out {output.summary:q} --traces {output.traces:q}")


rule cosa_evaluate:
    input:
        cells=[f"{COSA_OUT}/tta/{ds}/{b}_H{h}_s{s}.json" for ds, b, h, s in COSA_CELLS],
        traces=COSA_TRACE,
        claims="workflow/papers/cosa/claims.yaml",
        code=code("cosa", "evaluate"),
    output:
        table=f"{COSA_OUT}/table.csv",
        stream=f"{COSA_OUT}/stream.csv",
        claims=f"{COSA_OUT}/claims.json",
    params:
        **reads(),
    log:
        **logs("cosa", "evaluate"),
    benchmark:
        bench("cosa", "evaluate")
    threads: 1
    shell:
        step("papers.cosa.evaluate",
             "{input.cells:q} --traces {input.traces:q} --table {output.table:q} --stream {output.stream:q} --claims {output.claims:q}")


rule cosa_plot:
    input:
        table=f"{COSA_OUT}/table.csv",
        stream=f"{COSA_OUT}/stream.csv",
        code=code("cosa", "plot"),
    output:
        main_table=f"{COSA_OUT}/main_table.csv",
        figures=COSA_FIGURES,
    params:
        **reads(),
    log:
        **logs("cosa", "plot"),
    benchmark:
        bench("cosa", "plot")
    threads: 1
    shell:
        step("papers.cosa.plot",
             "--table {input.table:q} --stream {input.stream:q} --main-table {output.main_table:q} --figures {output.figures:q}")
