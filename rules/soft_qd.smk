# Soft QD / SQUAD (spec: shared/papers/soft_qd.md)
# evaluation archives -> runs (one job per benchmark x m x seed runs every method, and the control (SQUAD without
# repulsion) where planned, at an equal evaluation budget) + sigma sweep with its control + Soft QD property checks
# -> metrics + claims -> figures. The job lists come from workflow/papers/soft_qd/plan.py.
# `snakemake soft_qd_tune` (not part of `soft_qd`): the methods' knob grids at this budget on the tuning seed.
localrules: soft_qd, soft_qd_evaluate, soft_qd_plot, soft_qd_tune


from workflow.papers.soft_qd import plan as sqd_plan

SQD = PARAMS["soft_qd"]
SQD_WILDCARDS = dict(sqd_bench="|".join(sqd_plan.BENCHMARKS), sqd_method="squad|cma_mae|cma_maega|map_elites",
                     sqd_m="[0-9]+")
FIGURES["soft_qd"] = SQD_FIGURES = sqd_plan.figure_paths()


rule soft_qd:
    input:
        "results/soft_qd/tracking.json",  # claims, figures, and every job logged to MLflow
        sqd_plan.out_path("claims.json"),
        SQD_FIGURES,


rule soft_qd_tune:
    input:
        sqd_plan.out_path("tuning/winners.csv"),


rule soft_qd_centroids:  # every evaluation archive in one job (a handful of m's; ribs is loaded once)
    input:
        stamp=stamp("papers.soft_qd.centroids"),
    output:
        [sqd_plan.archive_path(m) for m in sqd_plan.archive_ms(SQD)],
    log:
        **logs("soft_qd", "centroids"),
    benchmark:
        bench("soft_qd", "centroids")
    threads: 1
    resources:
        **measured("soft_qd_centroids"),
    shell:
        step("papers.soft_qd.centroids", f"--m {' '.join(map(str, sqd_plan.archive_ms(SQD)))} --out {{output:q}}")


rule soft_qd_run:  # every method planned at this benchmark x m x seed, one after the other (each from this seed)
    input:
        stamp=stamp("papers.soft_qd.run",  # with the methods of this job (the step finds them through the plan)
                    derived=lambda w: sqd_plan.job_methods(SQD, w.sqd_bench, int(w.sqd_m), int(w.seed))),
    output:
        sqd_plan.job_path("{sqd_bench}", "{sqd_m}", "{seed}"),
    wildcard_constraints:
        **SQD_WILDCARDS,
    log:
        **logs("soft_qd", "run", "{sqd_bench}/m{sqd_m}/s{seed}"),
    benchmark:
        bench("soft_qd", "run", "{sqd_bench}/m{sqd_m}/s{seed}")
    threads: 1
    resources:
        **measured("soft_qd_run"),
    shell:
        step("papers.soft_qd.run",
             "--benchmark {wildcards.sqd_bench} --m {wildcards.sqd_m} --seed {wildcards.seed} "
             "--out {output:q}")


rule soft_qd_tune_grid:  # one method's knob grid at one m on the tuning seed (not part of `soft_qd`)
    input:
        centroids=sqd_plan.archive_path("{sqd_m}"),
        stamp=stamp("papers.soft_qd.tune"),
    output:
        sqd_plan.tuning_path("{sqd_method}", "{sqd_m}"),
    wildcard_constraints:
        **SQD_WILDCARDS,
    log:
        **logs("soft_qd", "tune", "{sqd_method}_m{sqd_m}"),
    benchmark:
        bench("soft_qd", "tune", "{sqd_method}_m{sqd_m}")
    threads: 1
    resources:
        **measured("soft_qd_tune_grid"),
    shell:
        step("papers.soft_qd.tune",
             "--method {wildcards.sqd_method} --m {wildcards.sqd_m} --centroids {input.centroids:q} --out {output:q}")


rule soft_qd_tune_winners:
    input:
        grids=sqd_plan.tuning_paths(SQD),
        stamp=stamp("papers.soft_qd.tune_winners"),  # the grids of the plan, and the values params.yaml uses
    output:
        sqd_plan.out_path("tuning/winners.csv"),
    log:
        **logs("soft_qd", "tune_winners"),
    benchmark:
        bench("soft_qd", "tune_winners")
    threads: 1
    resources:
        **measured("soft_qd_tune_winners"),
    shell:
        step("papers.soft_qd.tune_winners", "--out {output:q}")


rule soft_qd_sweep:  # every seed of the sigma sweep in one job (each run is seconds)
    input:
        centroids=sqd_plan.archive_path(SQD["sweep"]["m"]),
        stamp=stamp("papers.soft_qd.sweep"),
    output:
        sqd_plan.out_path("sweep.csv"),
    log:
        **logs("soft_qd", "sweep"),
    benchmark:
        bench("soft_qd", "sweep")
    threads: 1
    resources:
        **measured("soft_qd_sweep"),
    shell:
        step("papers.soft_qd.sweep", "--centroids {input.centroids:q} --out {output:q}")


rule soft_qd_theory:
    input:
        stamp=stamp("papers.soft_qd.theory"),
    output:
        trials=sqd_plan.out_path("theory/trials.csv"),
        limit=sqd_plan.out_path("theory/limit.csv"),
    log:
        **logs("soft_qd", "theory"),
    benchmark:
        bench("soft_qd", "theory")
    threads: 1
    resources:
        **measured("soft_qd_theory"),
    shell:
        step("papers.soft_qd.theory", "--trials {output.trials:q} --limit {output.limit:q}")


rule soft_qd_evaluate:
    input:
        runs=sqd_plan.job_paths(SQD),
        centroids=[sqd_plan.archive_path(m) for m in sqd_plan.run_ms(SQD)],
        sweep=sqd_plan.out_path("sweep.csv"),
        trials=sqd_plan.out_path("theory/trials.csv"),
        limit=sqd_plan.out_path("theory/limit.csv"),
        claims="workflow/papers/soft_qd/claims.yaml",
        stamp=stamp("papers.soft_qd.evaluate"),
    output:
        metrics=sqd_plan.out_path("metrics.csv"),
        summary=sqd_plan.out_path("summary.csv"),
        claims=sqd_plan.out_path("claims.json"),
    log:
        **logs("soft_qd", "evaluate"),
    benchmark:
        bench("soft_qd", "evaluate")
    threads: 1
    resources:
        **measured("soft_qd_evaluate"),
    shell:
        step("papers.soft_qd.evaluate",
             "--sweep {input.sweep:q} --trials {input.trials:q} --limit {input.limit:q} "
             "--metrics {output.metrics:q} --summary {output.summary:q} --claims {output.claims:q}")


rule soft_qd_plot:
    input:
        metrics=sqd_plan.out_path("metrics.csv"),
        summary=sqd_plan.out_path("summary.csv"),
        sweep=sqd_plan.out_path("sweep.csv"),
        limit=sqd_plan.out_path("theory/limit.csv"),
        archives=sqd_plan.heatmap_path(SQD),
        centroids=sqd_plan.archive_path(SQD["heatmap"]["m"]),
        stamp=stamp("papers.soft_qd.plot"),
    output:
        SQD_FIGURES,
    log:
        **logs("soft_qd", "plot"),
    benchmark:
        bench("soft_qd", "plot")
    threads: 1
    resources:
        **measured("soft_qd_plot"),
    shell:
        step("papers.soft_qd.plot",
             "--metrics {input.metrics:q} --summary {input.summary:q} --sweep {input.sweep:q} --limit {input.limit:q} "
             "--archives {input.archives:q} --centroids {input.centroids:q} --figures {output:q}")
