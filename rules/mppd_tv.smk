# MPPD-TV-l1: a spiking MLP's membrane-potential perturbation dynamic regularised as total variation
# (spec: shared/papers/mppd_tv.md). images -> one job per (training mode, regulariser, seed) -> claims -> figures;
# the exact 1-D toy (ROF against TV-l1) beside them.
localrules: mppd_tv, mppd_tv_evaluate, mppd_tv_plot


from workflow.papers.mppd_tv import plan as mppd_tv_plan

MPPD_TV = PARAMS["mppd_tv"]
check_plan(mppd_tv_plan, MPPD_TV)
FIGURES["mppd_tv"] = MPPD_TV_FIGURES = mppd_tv_plan.figure_paths()


rule mppd_tv:
    input:
        "results/mppd_tv/tracking.json",  # claims, figures, and every job logged to MLflow
        mppd_tv_plan.out_path("claims.json"),
        MPPD_TV_FIGURES,


rule mppd_tv_data:
    input:
        raw=mppd_tv_plan.raw_files(MPPD_TV["data"]),
        stamp=stamp("papers.mppd_tv.data"),
    output:
        mppd_tv_plan.out_path("data/images.npz"),
    log:
        **logs("mppd_tv", "data"),
    benchmark:
        bench("mppd_tv", "data")
    threads: 1
    resources:
        **measured("mppd_tv_data"),
    shell:
        step("papers.mppd_tv.data", "--raw {input.raw:q} --out {output:q}")


rule mppd_tv_toy:
    input:
        stamp=stamp("papers.mppd_tv.toy"),
    output:
        mppd_tv_plan.out_path("toy.json"),
    log:
        **logs("mppd_tv", "toy"),
    benchmark:
        bench("mppd_tv", "toy")
    threads: 1
    resources:
        **measured("mppd_tv_toy"),
    shell:
        step("papers.mppd_tv.toy", "--out {output:q}")


rule mppd_tv_train:
    input:
        data=mppd_tv_plan.out_path("data/images.npz"),
        stamp=stamp("papers.mppd_tv.train"),
    output:
        mppd_tv_plan.out_path("runs/{mppd_mode}/{mppd_reg}_s{seed}.json"),
    wildcard_constraints:
        mppd_mode="gn|at",
        mppd_reg="[a-z0-9_]+",
    log:
        **logs("mppd_tv", "train", "{mppd_mode}/{mppd_reg}_s{seed}"),
    benchmark:
        bench("mppd_tv", "train", "{mppd_mode}/{mppd_reg}_s{seed}")
    threads: 1
    resources:
        **measured("mppd_tv_train"),
    shell:
        step("papers.mppd_tv.train",
             "--data {input.data:q} --mode {wildcards.mppd_mode} --reg {wildcards.mppd_reg} --seed {wildcards.seed} "
             "--out {output:q}")


rule mppd_tv_evaluate:
    input:
        runs=mppd_tv_plan.run_paths(MPPD_TV["plan"]),
        toy=mppd_tv_plan.out_path("toy.json"),
        claims="workflow/papers/mppd_tv/claims.yaml",
        stamp=stamp("papers.mppd_tv.evaluate"),  # the plan: which runs exist
    output:
        table=mppd_tv_plan.out_path("runs.csv"),
        claims=mppd_tv_plan.out_path("claims.json"),
    log:
        **logs("mppd_tv", "evaluate"),
    benchmark:
        bench("mppd_tv", "evaluate")
    threads: 1
    resources:
        **measured("mppd_tv_evaluate"),
    shell:
        step("papers.mppd_tv.evaluate", "--toy {input.toy:q} --table {output.table:q} --claims {output.claims:q}")


rule mppd_tv_plot:
    input:
        table=mppd_tv_plan.out_path("runs.csv"),
        toy=mppd_tv_plan.out_path("toy.json"),
        stamp=stamp("papers.mppd_tv.plot"),
    output:
        MPPD_TV_FIGURES,
    log:
        **logs("mppd_tv", "plot"),
    benchmark:
        bench("mppd_tv", "plot")
    threads: 1
    resources:
        **measured("mppd_tv_plot"),
    shell:
        step("papers.mppd_tv.plot", "--table {input.table:q} --toy {input.toy:q} --figures {output:q}")
