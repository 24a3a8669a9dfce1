# HEX: test-time voting over semi-AR block schedules of a diffusion LM (spec: shared/papers/hex.md).
# problems -> one masked-diffusion model per seed (trained once) -> every decoder per seed -> votes + claims -> figures
localrules: hex, hex_evaluate, hex_plot


from workflow.papers.hex import plan as hex_plan

HEX = PARAMS["hex"]
check_plan(hex_plan, HEX)
FIGURES["hex"] = HEX_FIGURES = hex_plan.figure_paths()


rule hex:
    input:
        "results/hex/tracking.json",  # claims, figures, and every job logged to MLflow
        hex_plan.out_path("claims.json"),
        HEX_FIGURES,


rule hex_data:
    input:
        stamp=stamp("papers.hex.data"),
    output:
        hex_plan.problems_path(),
    log:
        **logs("hex", "data"),
    benchmark:
        bench("hex", "data")
    threads: 1
    resources:
        **measured("hex_data"),
    shell:
        step("papers.hex.data", "--out {output:q}")


rule hex_train:
    input:
        problems=hex_plan.problems_path(),
        stamp=stamp("papers.hex.train"),
    output:
        hex_plan.model_path("{seed}"),
    log:
        **logs("hex", "train", "s{seed}"),
    benchmark:
        bench("hex", "train", "s{seed}")
    threads: 1
    resources:
        **measured("hex_train"),
    shell:
        step("papers.hex.train", "--problems {input.problems:q} --seed {wildcards.seed} --out {output:q}")


rule hex_decode:
    input:
        problems=hex_plan.problems_path(),
        model=hex_plan.model_path("{seed}"),
        stamp=stamp("papers.hex.decode"),
    output:
        decodes=hex_plan.decodes_path("{seed}"),
        eos=hex_plan.eos_path("{seed}"),
    log:
        **logs("hex", "decode", "s{seed}"),
    benchmark:
        bench("hex", "decode", "s{seed}")
    threads: 1
    resources:
        **measured("hex_decode"),
    shell:
        step("papers.hex.decode", "--problems {input.problems:q} --model {input.model:q} --seed {wildcards.seed} "
             "--out {output.decodes:q} --eos {output.eos:q}")


rule hex_evaluate:
    input:
        decodes=hex_plan.decodes_paths(HEX["plan"]),
        claims="workflow/papers/hex/claims.yaml",
        stamp=stamp("papers.hex.evaluate"),  # the plan: which decodes exist
    output:
        main=hex_plan.out_path("main_table.csv"),
        table=hex_plan.out_path("decoders.csv"),
        scaling=hex_plan.out_path("scaling.csv"),
        claims=hex_plan.out_path("claims.json"),
    log:
        **logs("hex", "evaluate"),
    benchmark:
        bench("hex", "evaluate")
    threads: 1
    resources:
        **measured("hex_evaluate"),
    shell:
        step("papers.hex.evaluate", "--main {output.main:q} --table {output.table:q} --scaling {output.scaling:q} "
             "--claims {output.claims:q}")


rule hex_plot:
    input:
        main=hex_plan.out_path("main_table.csv"),
        table=hex_plan.out_path("decoders.csv"),
        scaling=hex_plan.out_path("scaling.csv"),
        eos=hex_plan.eos_paths(HEX["plan"]),
        stamp=stamp("papers.hex.plot"),
    output:
        HEX_FIGURES,
    log:
        **logs("hex", "plot"),
    benchmark:
        bench("hex", "plot")
    threads: 1
    resources:
        **measured("hex_plot"),
    shell:
        step("papers.hex.plot", "--main {input.main:q} --table {input.table:q} --scaling {input.scaling:q} "
             "--figures {output:q}")
