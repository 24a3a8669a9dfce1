# Rethinking Pareto frontier: optimal trade-offs in fair classification (spec: shared/papers/fairness_pareto.md)
# raw Adult/COMPAS -> base MLP per (data set, seed) -> frontiers (cvxpy LPs) and intervention families per
# (data set, seed, family) -> claims -> figures mirroring the paper's Figs. 2-4 and its table
FP = PARAMS["fairness_pareto"]
FP_OUT = "results/fairness_pareto"
FP_CELLS = [(ds, seed) for ds in FP["plan"]["datasets"] for seed in FP["plan"]["seeds"]]
FP_FAMILIES = FP["interventions"]["families"]
FIGURES["fairness_pareto"] = FP_FIGURES = expand(f"{FP_OUT}/figures/{{fig}}.png",
                                                 fig=["frontier_eod", "frontier_dp", "fairness_tradeoff", "table_eod_optimal"])


def fp_raw(wildcards):
    """Catalog files of a data set's source."""
    source = FP["datasets"][wildcards.dataset]["source"]
    names = ["adult_train", "adult_test"] if source == "adult" else [source]
    return [f"data/raw/{n}.csv" for n in names]


wildcard_constraints:
    fp_family="|".join(["ours", "gstar", "eqodds", "dfr", "expgrad"]),  # global: a paper-prefixed name (hypergraph_sparsify has `family`)


rule fairness_pareto:
    input:
        "results/fairness_pareto/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{FP_OUT}/claims.json",
        FP_FIGURES,


rule fairness_pareto_train_base:
    input:
        raw=fp_raw,
        code=code("fairness_pareto", "train_base"),
    output:
        features=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.npz",
        model=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.pt",
        summary=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.json",
    params:
        **reads("fairness_pareto.datasets.{dataset}", "fairness_pareto.base"),
    log:
        **logs("fairness_pareto", "train_base", "{dataset}_s{seed}"),
    benchmark:
        bench("fairness_pareto", "train_base", "{dataset}_s{seed}")
    threads: 1
    shell:
        step("papers.fairness_pareto.train_base",
             "--raw {input.raw:q} --seed {wildcards.seed} --features {output.features:q} --model {output.model:q} --summary {output.summary:q}")


rule fairness_pareto_frontiers:
    input:
        features=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.npz",
        base=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.json",
        code=code("fairness_pareto", "frontiers"),
    output:
        frontiers=f"{FP_OUT}/frontiers/{{dataset}}_s{{seed}}.csv",
        fairfair=f"{FP_OUT}/frontiers/{{dataset}}_s{{seed}}_fairfair.csv",
        summary=f"{FP_OUT}/frontiers/{{dataset}}_s{{seed}}.json",
        control=f"{FP_OUT}/frontiers/{{dataset}}_s{{seed}}_shuffled.csv",
    params:
        **reads("fairness_pareto.frontiers"),
    log:
        **logs("fairness_pareto", "frontiers", "{dataset}_s{seed}"),
    benchmark:
        bench("fairness_pareto", "frontiers", "{dataset}_s{seed}")
    threads: 1
    shell:
        step("papers.fairness_pareto.frontiers",
             "--features {input.features:q} --base {input.base:q} --frontiers {output.frontiers:q} --fairfair {output.fairfair:q} "
             "--summary {output.summary:q} --control {output.control:q}")


rule fairness_pareto_interventions:
    input:
        features=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.npz",
        base=f"{FP_OUT}/base/{{dataset}}_s{{seed}}.json",
        code=code("fairness_pareto", "interventions"),
    output:
        f"{FP_OUT}/points/{{dataset}}_s{{seed}}_{{fp_family}}.csv",
    params:
        **reads("fairness_pareto.interventions", "fairness_pareto.frontiers.roc_thresholds"),
    log:
        **logs("fairness_pareto", "interventions", "{dataset}_s{seed}_{fp_family}"),
    benchmark:
        bench("fairness_pareto", "interventions", "{dataset}_s{seed}_{fp_family}")
    threads: 1
    shell:
        step("papers.fairness_pareto.interventions",
             "--features {input.features:q} --base {input.base:q} --family {wildcards.fp_family} --seed {wildcards.seed} --out {output:q}")


rule fairness_pareto_evaluate:
    input:
        frontiers=[f"{FP_OUT}/frontiers/{ds}_s{s}.csv" for ds, s in FP_CELLS],
        fairfair=[f"{FP_OUT}/frontiers/{ds}_s{s}_fairfair.csv" for ds, s in FP_CELLS],
        summaries=[f"{FP_OUT}/frontiers/{ds}_s{s}.json" for ds, s in FP_CELLS],
        points=[f"{FP_OUT}/points/{ds}_s{s}_{fam}.csv" for ds, s in FP_CELLS for fam in FP_FAMILIES],
        controls=[f"{FP_OUT}/frontiers/{ds}_s{s}_shuffled.csv" for ds, s in FP_CELLS],
        claims="workflow/papers/fairness_pareto/claims.yaml",
        code=code("fairness_pareto", "evaluate"),
    output:
        frontiers=f"{FP_OUT}/frontiers.csv",
        fairfair=f"{FP_OUT}/fairfair.csv",
        points=f"{FP_OUT}/points.csv",
        cells=f"{FP_OUT}/cells.csv",
        claims=f"{FP_OUT}/claims.json",
    params:
        **reads(),
    log:
        **logs("fairness_pareto", "evaluate"),
    benchmark:
        bench("fairness_pareto", "evaluate")
    threads: 1
    shell:
        step("papers.fairness_pareto.evaluate",
             "--frontiers {input.frontiers:q} --fairfair {input.fairfair:q} --summaries {input.summaries:q} --points {input.points:q} "
             "--controls {input.controls:q} --out-frontiers {output.frontiers:q} --out-fairfair {output.fairfair:q} --out-points {output.points:q} "
             "--out-cells {output.cells:q} --claims {output.claims:q}")


rule fairness_pareto_plot:
    input:
        frontiers=f"{FP_OUT}/frontiers.csv",
        fairfair=f"{FP_OUT}/fairfair.csv",
        points=f"{FP_OUT}/points.csv",
        cells=f"{FP_OUT}/cells.csv",
        code=code("fairness_pareto", "plot"),
    output:
        table=f"{FP_OUT}/table_eod_optimal.csv",
        figures=FP_FIGURES,
    params:
        **reads(),
    log:
        **logs("fairness_pareto", "plot"),
    benchmark:
        bench("fairness_pareto", "plot")
    threads: 1
    shell:
        step("papers.fairness_pareto.plot",
             "--frontiers {input.frontiers:q} --fairfair {input.fairfair:q} --points {input.points:q} --cells {input.cells:q} "
             "--table {output.table:q} --figures {output.figures:q}")
