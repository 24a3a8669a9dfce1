# On Code-Induced Reasoning: which properties of code data help reasoning (spec: shared/papers/code_reasoning.md).
# fixed sets -> one base model per seed (Austen + priming) -> one finetune per (variant, seed), scored -> claims -> figures
localrules: code_reasoning, code_reasoning_evaluate, code_reasoning_plot


from workflow.papers.code_reasoning import plan as code_reasoning_plan

CODE_REASONING = PARAMS["code_reasoning"]
check_plan(code_reasoning_plan, CODE_REASONING)
FIGURES["code_reasoning"] = CODE_REASONING_FIGURES = code_reasoning_plan.figure_paths()


rule code_reasoning:
    input:
        "results/code_reasoning/tracking.json",  # claims, figures, and every job logged to MLflow
        code_reasoning_plan.out_path("claims.json"),
        CODE_REASONING_FIGURES,


rule code_reasoning_data:
    input:
        stamp=stamp("papers.code_reasoning.data"),
    output:
        code_reasoning_plan.sets_path(),
    log:
        **logs("code_reasoning", "data"),
    benchmark:
        bench("code_reasoning", "data")
    threads: 1
    resources:
        **measured("code_reasoning_data"),
    shell:
        step("papers.code_reasoning.data", "--out {output:q}")


rule code_reasoning_base:
    input:
        sets=code_reasoning_plan.sets_path(),
        rdb="data/raw/austen_rdb.rdb",
        rdx="data/raw/austen_rdx.rdx",
        stamp=stamp("papers.code_reasoning.base"),
    output:
        code_reasoning_plan.base_path("{seed}"),
    log:
        **logs("code_reasoning", "base", "s{seed}"),
    benchmark:
        bench("code_reasoning", "base", "s{seed}")
    threads: 1
    resources:
        **measured("code_reasoning_base"),
    shell:
        step("papers.code_reasoning.base", "--sets {input.sets:q} --rdb {input.rdb:q} --rdx {input.rdx:q} "
             "--seed {wildcards.seed} --out {output:q}")


rule code_reasoning_sft:
    input:
        sets=code_reasoning_plan.sets_path(),
        base=code_reasoning_plan.base_path("{seed}"),
        stamp=stamp("papers.code_reasoning.sft"),
    output:
        code_reasoning_plan.scores_path("{variant}", "{seed}"),
    wildcard_constraints:
        variant="[a-z_]+",
    log:
        **logs("code_reasoning", "sft", "{variant}/s{seed}"),
    benchmark:
        bench("code_reasoning", "sft", "{variant}/s{seed}")
    threads: 1
    resources:
        **measured("code_reasoning_sft"),
    shell:
        step("papers.code_reasoning.sft", "--sets {input.sets:q} --base {input.base:q} --variant {wildcards.variant} "
             "--seed {wildcards.seed} --out {output:q}")


rule code_reasoning_evaluate:
    input:
        sets=code_reasoning_plan.sets_path(),
        scores=code_reasoning_plan.all_scores(CODE_REASONING["plan"]),
        claims="workflow/papers/code_reasoning/claims.yaml",
        stamp=stamp("papers.code_reasoning.evaluate"),  # the plan: which scores exist
    output:
        table=code_reasoning_plan.out_path("table_accuracy.csv"),
        claims=code_reasoning_plan.out_path("claims.json"),
    log:
        **logs("code_reasoning", "evaluate"),
    benchmark:
        bench("code_reasoning", "evaluate")
    threads: 1
    resources:
        **measured("code_reasoning_evaluate"),
    shell:
        step("papers.code_reasoning.evaluate", "--sets {input.sets:q} --table {output.table:q} --claims {output.claims:q}")


rule code_reasoning_plot:
    input:
        table=code_reasoning_plan.out_path("table_accuracy.csv"),
        stamp=stamp("papers.code_reasoning.plot"),
    output:
        CODE_REASONING_FIGURES,
    log:
        **logs("code_reasoning", "plot"),
    benchmark:
        bench("code_reasoning", "plot")
    threads: 1
    resources:
        **measured("code_reasoning_plot"),
    shell:
        step("papers.code_reasoning.plot", "--table {input.table:q} --figures {output:q}")
