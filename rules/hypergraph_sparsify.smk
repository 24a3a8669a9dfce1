# Streaming hypergraph sparsification (spec: shared/papers/hypergraph_sparsify.md)
# one job per (family, seed): streams of every m -> every method -> scores; sliding window per (family, seed)
# -> table + claims -> figures
localrules: hypergraph_sparsify, hypergraph_sparsify_evaluate, hypergraph_sparsify_plot


from workflow.papers.hypergraph_sparsify import plan as hsp_plan

HSP = PARAMS["hypergraph_sparsify"]
HSP_WILDCARDS = dict(family="[A-Za-z0-9]+")  # a key of hypergraph_sparsify.families
FIGURES["hypergraph_sparsify"] = HSP_FIGURES = hsp_plan.figure_paths()


rule hypergraph_sparsify:
    input:
        "results/hypergraph_sparsify/tracking.json",  # claims, figures, and every job logged to MLflow
        hsp_plan.out_path("claims.json"),
        HSP_FIGURES,


rule hypergraph_sparsify_sparsify_eval:
    input:
        stamp=stamp("papers.hypergraph_sparsify.sparsify_eval"),
    output:
        table=hsp_plan.out_path("sparsify/{family}_s{seed}.csv"),
        space=hsp_plan.out_path("sparsify/{family}_s{seed}_space.csv"),
    wildcard_constraints:
        **HSP_WILDCARDS,
    log:
        **logs("hypergraph_sparsify", "sparsify_eval", "{family}_s{seed}"),
    benchmark:
        bench("hypergraph_sparsify", "sparsify_eval", "{family}_s{seed}")
    threads: 1
    resources:
        **measured("hypergraph_sparsify_sparsify_eval"),
    shell:
        step("papers.hypergraph_sparsify.sparsify_eval",
             "--family {wildcards.family} --seed {wildcards.seed} --out {output.table:q} --space {output.space:q}")


rule hypergraph_sparsify_sliding:
    input:
        stamp=stamp("papers.hypergraph_sparsify.sliding"),
    output:
        queries=hsp_plan.out_path("sliding/{family}_s{seed}.csv"),
        memory=hsp_plan.out_path("sliding/{family}_s{seed}_memory.csv"),
    wildcard_constraints:
        **HSP_WILDCARDS,
    log:
        **logs("hypergraph_sparsify", "sliding", "{family}_s{seed}"),
    benchmark:
        bench("hypergraph_sparsify", "sliding", "{family}_s{seed}")
    threads: 1
    resources:
        **measured("hypergraph_sparsify_sliding"),
    shell:
        step("papers.hypergraph_sparsify.sliding",
             "--family {wildcards.family} --seed {wildcards.seed} --out {output.queries:q} --memory {output.memory:q}")


rule hypergraph_sparsify_evaluate:
    input:
        runs=hsp_plan.sweep_tables(HSP),
        space=hsp_plan.space_logs(HSP),
        sliding=hsp_plan.sliding_queries(HSP),
        memory=hsp_plan.sliding_memory(HSP),
        claims="workflow/papers/hypergraph_sparsify/claims.yaml",
        stamp=stamp("papers.hypergraph_sparsify.evaluate"),  # the plan (which jobs exist) and the sweep's m_small, m_large
    output:
        table=hsp_plan.out_path("table.csv"),
        space=hsp_plan.out_path("space.csv"),
        sliding=hsp_plan.out_path("sliding.csv"),
        trace=hsp_plan.out_path("sliding_memory.csv"),
        claims=hsp_plan.out_path("claims.json"),
    log:
        **logs("hypergraph_sparsify", "evaluate"),
    benchmark:
        bench("hypergraph_sparsify", "evaluate")
    threads: 1
    resources:
        **measured("hypergraph_sparsify_evaluate"),
    shell:
        step("papers.hypergraph_sparsify.evaluate",
             "--table {output.table:q} --space {output.space:q} --sliding-table {output.sliding:q} "
             "--sliding-trace {output.trace:q} --claims {output.claims:q}")


rule hypergraph_sparsify_plot:
    input:
        table=hsp_plan.out_path("table.csv"),
        space=hsp_plan.out_path("space.csv"),
        sliding=hsp_plan.out_path("sliding.csv"),
        trace=hsp_plan.out_path("sliding_memory.csv"),
        stamp=stamp("papers.hypergraph_sparsify.plot"),
    output:
        main_table=hsp_plan.out_path("main_table.csv"),
        figures=HSP_FIGURES,
    log:
        **logs("hypergraph_sparsify", "plot"),
    benchmark:
        bench("hypergraph_sparsify", "plot")
    threads: 1
    resources:
        **measured("hypergraph_sparsify_plot"),
    shell:
        step("papers.hypergraph_sparsify.plot",
             "--table {input.table:q} --space {input.space:q} --sliding {input.sliding:q} --sliding-trace {input.trace:q} "
             "--main-table {output.main_table:q} --figures {output.figures:q}")
