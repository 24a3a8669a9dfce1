# Soft QD / SQUAD (spec: shared/papers/soft_qd.md)
# evaluation archives per m -> runs (benchmark x m x method x seed, equal evaluation budget) + the control (SQUAD
# without repulsion) + sigma sweep with its control (per seed) + Soft QD property checks -> metrics + claims -> figures.
# `snakemake soft_qd_tune` (not part of `soft_qd`): the methods' knob grids at this budget on the tuning seed.
SQD = PARAMS["soft_qd"]
SQD_OUT = "results/soft_qd"
FIGURES["soft_qd"] = SQD_FIGURES = expand(f"{SQD_OUT}/figures/{{fig}}.png",
                                          fig=["fig_a_scalability", "fig_b_sigma_sweep", "fig_c_archives_m2", "fig_d_soft_qd_limit", "table_metrics"])
SQD_RUNS = [f"{SQD_OUT}/runs/{bench}/m{m}/{method}_s{seed}.npz"
            for bench, b in SQD["benchmarks"].items() for m in b["ms"] for method in SQD["methods"]
            for seed in b.get("seeds", SQD["seeds"])]
SQD_CONTROL_RUNS = [f"{SQD_OUT}/runs/{SQD['control']['benchmark']}/m{m}/squad_norep_s{seed}.npz"
                    for m in SQD["control"]["ms"] for seed in SQD["seeds"]]
SQD_HEATMAP = [f"{SQD_OUT}/runs/rastrigin/m{SQD['heatmap']['m']}/{method}_s{SQD['heatmap']['seed']}.npz"
               for method in SQD["methods"]]
SQD_MS = sorted({m for b in SQD["benchmarks"].values() for m in b["ms"]} | {SQD["sweep"]["m"], SQD["heatmap"]["m"]})
SQD_TUNE = expand(f"{SQD_OUT}/tuning/{{method}}_m{{m}}.csv", method=SQD["tuning"]["grid"], m=SQD["tuning"]["ms"])


wildcard_constraints:
    sqd_bench="rastrigin|sphere",
    sqd_method="squad|cma_mae|cma_maega|map_elites",
    sqd_m="[0-9]+",


rule soft_qd:
    input:
        "results/soft_qd/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{SQD_OUT}/claims.json",
        SQD_FIGURES,


rule soft_qd_tune:
    input:
        f"{SQD_OUT}/tuning/winners.csv",


rule soft_qd_centroids:
    input:
        code=code("soft_qd", "centroids"),
    output:
        f"{SQD_OUT}/archives/m{{sqd_m}}.npz",
    params:
        **reads("soft_qd.evaluation.cells", "soft_qd.evaluation.samples", "soft_qd.evaluation.archive_seed"),
    log:
        **logs("soft_qd", "centroids", "m{sqd_m}"),
    benchmark:
        bench("soft_qd", "centroids", "m{sqd_m}")
    threads: 1
    shell:
        step("papers.soft_qd.centroids", "--m {wildcards.sqd_m} --out {output:q}")


rule soft_qd_run:
    input:
        code=code("soft_qd", "run"),
    output:
        f"{SQD_OUT}/runs/{{sqd_bench}}/m{{sqd_m}}/{{sqd_method}}_s{{seed}}.npz",
    params:
        **reads("soft_qd.budget", "soft_qd.benchmarks.{sqd_bench}.D", "soft_qd.ribs", "soft_qd.{sqd_method}"),
    log:
        **logs("soft_qd", "run", "{sqd_bench}/m{sqd_m}/{sqd_method}_s{seed}"),
    benchmark:
        bench("soft_qd", "run", "{sqd_bench}/m{sqd_m}/{sqd_method}_s{seed}")
    threads: 1
    shell:
        step("papers.soft_qd.run",
             "--benchmark {wildcards.sqd_bench} --method {wildcards.sqd_method} --m {wildcards.sqd_m} "
             "--seed {wildcards.seed} --out {output:q}")


rule soft_qd_control:  # SQUAD with the repulsion term removed: the negative control of claims C1 and C2
    input:
        code=code("soft_qd", "run"),
    output:
        f"{SQD_OUT}/runs/{{sqd_bench}}/m{{sqd_m}}/squad_norep_s{{seed}}.npz",
    params:
        **reads("soft_qd.budget", "soft_qd.benchmarks.{sqd_bench}.D", "soft_qd.squad"),
    log:
        **logs("soft_qd", "run", "{sqd_bench}/m{sqd_m}/squad_norep_s{seed}"),
    benchmark:
        bench("soft_qd", "run", "{sqd_bench}/m{sqd_m}/squad_norep_s{seed}")
    threads: 1
    shell:
        step("papers.soft_qd.run",
             "--benchmark {wildcards.sqd_bench} --method squad_norep --m {wildcards.sqd_m} "
             "--seed {wildcards.seed} --out {output:q}")


rule soft_qd_tune_grid:  # one method's knob grid at one m on the tuning seed (not part of `soft_qd`)
    input:
        centroids=f"{SQD_OUT}/archives/m{{sqd_m}}.npz",
        code=code("soft_qd", "tune"),
    output:
        f"{SQD_OUT}/tuning/{{sqd_method}}_m{{sqd_m}}.csv",
    params:
        **reads("soft_qd.tuning", "soft_qd.budget", "soft_qd.benchmarks.rastrigin.D", "soft_qd.ribs",
                "soft_qd.squad.batch_size", "soft_qd.squad.K"),
    log:
        **logs("soft_qd", "tune", "{sqd_method}_m{sqd_m}"),
    benchmark:
        bench("soft_qd", "tune", "{sqd_method}_m{sqd_m}")
    threads: 1
    shell:
        step("papers.soft_qd.tune",
             "--method {wildcards.sqd_method} --m {wildcards.sqd_m} --centroids {input.centroids:q} --out {output:q}")


rule soft_qd_tune_winners:
    input:
        grids=SQD_TUNE,
        code=code("soft_qd", "tune_winners"),
    output:
        f"{SQD_OUT}/tuning/winners.csv",
    params:
        **reads("soft_qd"),
    log:
        **logs("soft_qd", "tune_winners"),
    benchmark:
        bench("soft_qd", "tune_winners")
    threads: 1
    shell:
        step("papers.soft_qd.tune_winners", "--grids {input.grids:q} --out {output:q}")


rule soft_qd_sweep:
    input:
        centroids=f"{SQD_OUT}/archives/m{SQD['sweep']['m']}.npz",
        code=code("soft_qd", "sweep"),
    output:
        f"{SQD_OUT}/sweep/s{{seed}}.csv",
    params:
        **reads("soft_qd.sweep", "soft_qd.squad"),
    log:
        **logs("soft_qd", "sweep", "s{seed}"),
    benchmark:
        bench("soft_qd", "sweep", "s{seed}")
    threads: 1
    shell:
        step("papers.soft_qd.sweep", "--seed {wildcards.seed} --centroids {input.centroids:q} --out {output:q}")


rule soft_qd_theory:
    input:
        code=code("soft_qd", "theory"),
    output:
        trials=f"{SQD_OUT}/theory/trials.csv",
        limit=f"{SQD_OUT}/theory/limit.csv",
    params:
        **reads("soft_qd.theory"),
    log:
        **logs("soft_qd", "theory"),
    benchmark:
        bench("soft_qd", "theory")
    threads: 1
    shell:
        step("papers.soft_qd.theory", "--trials {output.trials:q} --limit {output.limit:q}")


rule soft_qd_evaluate:
    input:
        runs=SQD_RUNS + SQD_CONTROL_RUNS + [r for r in SQD_HEATMAP if r not in SQD_RUNS],
        centroids=expand(f"{SQD_OUT}/archives/m{{m}}.npz", m=SQD_MS),
        sweep=expand(f"{SQD_OUT}/sweep/s{{seed}}.csv", seed=SQD["sweep"]["seeds"]),
        trials=f"{SQD_OUT}/theory/trials.csv",
        limit=f"{SQD_OUT}/theory/limit.csv",
        claims="workflow/papers/soft_qd/claims.yaml",
        code=code("soft_qd", "evaluate"),
    output:
        metrics=f"{SQD_OUT}/metrics.csv",
        summary=f"{SQD_OUT}/summary.csv",
        sweep=f"{SQD_OUT}/sweep.csv",
        claims=f"{SQD_OUT}/claims.json",
    params:
        **reads("soft_qd.evaluation.vendi_max_n"),
    log:
        **logs("soft_qd", "evaluate"),
    benchmark:
        bench("soft_qd", "evaluate")
    threads: 1
    shell:
        step("papers.soft_qd.evaluate",
             "--runs {input.runs:q} --centroids {input.centroids:q} --sweep {input.sweep:q} --trials {input.trials:q} "
             "--limit {input.limit:q} --metrics {output.metrics:q} --summary {output.summary:q} "
             "--sweep-table {output.sweep:q} --claims {output.claims:q}")


rule soft_qd_plot:
    input:
        metrics=f"{SQD_OUT}/metrics.csv",
        summary=f"{SQD_OUT}/summary.csv",
        sweep=f"{SQD_OUT}/sweep.csv",
        limit=f"{SQD_OUT}/theory/limit.csv",
        archives=SQD_HEATMAP,
        centroids=f"{SQD_OUT}/archives/m{SQD['heatmap']['m']}.npz",
        code=code("soft_qd", "plot"),
    output:
        SQD_FIGURES,
    params:
        **reads(),
    log:
        **logs("soft_qd", "plot"),
    benchmark:
        bench("soft_qd", "plot")
    threads: 1
    shell:
        step("papers.soft_qd.plot",
             "--metrics {input.metrics:q} --summary {input.summary:q} --sweep {input.sweep:q} --limit {input.limit:q} "
             "--archives {input.archives:q} --centroids {input.centroids:q} --figures {output:q}")
