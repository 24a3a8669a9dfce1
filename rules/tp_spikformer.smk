# TP-Spikformer: training-free token pruning of a spiking transformer (spec: shared/papers/tp_spikformer.md).
# images -> one base model per seed (trained once, frozen) -> one pruning sweep per seed -> claims -> figures
localrules: tp_spikformer, tp_spikformer_evaluate, tp_spikformer_plot


from workflow.papers.tp_spikformer import plan as tp_plan

TP = PARAMS["tp_spikformer"]
check_plan(tp_plan, TP)
FIGURES["tp_spikformer"] = TP_FIGURES = tp_plan.figure_paths()


rule tp_spikformer:
    input:
        "results/tp_spikformer/tracking.json",  # claims, figures, and every job logged to MLflow
        tp_plan.out_path("claims.json"),
        TP_FIGURES,


rule tp_spikformer_data:
    input:
        raw=tp_plan.raw_files(TP["data"]),
        stamp=stamp("papers.tp_spikformer.data"),
    output:
        tp_plan.out_path("data/images.npz"),
    log:
        **logs("tp_spikformer", "data"),
    benchmark:
        bench("tp_spikformer", "data")
    threads: 1
    resources:
        **measured("tp_spikformer_data"),
    shell:
        step("papers.tp_spikformer.data", "--raw {input.raw:q} --out {output:q}")


rule tp_spikformer_train_base:
    input:
        data=tp_plan.out_path("data/images.npz"),
        stamp=stamp("papers.tp_spikformer.train_base"),
    output:
        tp_plan.base_path("{seed}"),
    log:
        **logs("tp_spikformer", "train_base", "s{seed}"),
    benchmark:
        bench("tp_spikformer", "train_base", "s{seed}")
    threads: 1
    resources:
        **measured("tp_spikformer_train_base"),
    shell:
        step("papers.tp_spikformer.train_base", "--data {input.data:q} --seed {wildcards.seed} --out {output:q}")


rule tp_spikformer_prune:
    input:
        data=tp_plan.out_path("data/images.npz"),
        base=tp_plan.base_path("{seed}"),
        stamp=stamp("papers.tp_spikformer.prune"),
    output:
        tp_plan.sweep_path("{seed}"),
    log:
        **logs("tp_spikformer", "prune", "s{seed}"),
    benchmark:
        bench("tp_spikformer", "prune", "s{seed}")
    threads: 1
    resources:
        **measured("tp_spikformer_prune"),
    shell:
        step("papers.tp_spikformer.prune",
             "--data {input.data:q} --base {input.base:q} --seed {wildcards.seed} --out {output:q}")


rule tp_spikformer_evaluate:
    input:
        sweeps=tp_plan.sweep_paths(TP["plan"]),
        claims="workflow/papers/tp_spikformer/claims.yaml",
        stamp=stamp("papers.tp_spikformer.evaluate"),  # the plan: which sweeps exist
    output:
        table=tp_plan.out_path("sweeps.csv"),
        claims=tp_plan.out_path("claims.json"),
    log:
        **logs("tp_spikformer", "evaluate"),
    benchmark:
        bench("tp_spikformer", "evaluate")
    threads: 1
    resources:
        **measured("tp_spikformer_evaluate"),
    shell:
        step("papers.tp_spikformer.evaluate", "--table {output.table:q} --claims {output.claims:q}")


rule tp_spikformer_plot:
    input:
        table=tp_plan.out_path("sweeps.csv"),
        stamp=stamp("papers.tp_spikformer.plot"),
    output:
        TP_FIGURES,
    log:
        **logs("tp_spikformer", "plot"),
    benchmark:
        bench("tp_spikformer", "plot")
    threads: 1
    resources:
        **measured("tp_spikformer_plot"),
    shell:
        step("papers.tp_spikformer.plot", "--table {input.table:q} --figures {output:q}")
