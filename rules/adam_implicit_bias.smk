# Implicit bias of per-sample Adam (spec: shared/papers/adam_implicit_bias.md)
# data sets -> optimiser runs per (data set, group: its family's algorithms | the batch sweep) -> evaluation + claims
# -> figures
localrules: adam_implicit_bias, adam_implicit_bias_evaluate, adam_implicit_bias_plot


from workflow.papers.adam_implicit_bias import plan as adam_plan

ADAM = PARAMS["adam_implicit_bias"]
ADAM_WILDCARDS = dict(dataset="(?:gr|gauss)[0-9]+", group="|".join(adam_plan.GROUPS))
FIGURES["adam_implicit_bias"] = ADAM_FIGURES = adam_plan.figure_paths()


rule adam_implicit_bias:
    input:
        "results/adam_implicit_bias/tracking.json",  # claims, figures, and every job logged to MLflow
        adam_plan.out_path("claims.json"),
        ADAM_FIGURES,


rule adam_implicit_bias_data:
    input:
        stamp=stamp("papers.adam_implicit_bias.data"),
    output:
        data=adam_plan.data_path("{dataset}"),
        summary=adam_plan.data_path("{dataset}", "json"),
    wildcard_constraints:
        **ADAM_WILDCARDS,
    log:
        **logs("adam_implicit_bias", "data", "{dataset}"),
    benchmark:
        bench("adam_implicit_bias", "data", "{dataset}")
    threads: 1
    resources:
        **measured("adam_implicit_bias_data"),
    shell:
        step("papers.adam_implicit_bias.data", "{wildcards.dataset} --out {output.data:q} --summary {output.summary:q}")


rule adam_implicit_bias_train:  # one job per (data set, group); its algorithms come from the plan
    input:
        data=adam_plan.data_path("{dataset}"),
        stamp=stamp("papers.adam_implicit_bias.train"),
    output:
        adam_plan.train_path("{dataset}", "{group}"),
    wildcard_constraints:
        **ADAM_WILDCARDS,
    log:
        **logs("adam_implicit_bias", "train", "{dataset}/{group}"),
    benchmark:
        bench("adam_implicit_bias", "train", "{dataset}/{group}")
    threads: 1
    resources:
        **measured("adam_implicit_bias_train"),
    shell:
        step("papers.adam_implicit_bias.train",
             "{wildcards.dataset} --group {wildcards.group} --data {input.data:q} --out {output:q}")


rule adam_implicit_bias_evaluate:
    input:
        runs=adam_plan.train_paths(ADAM),
        claims="workflow/papers/adam_implicit_bias/claims.yaml",
        stamp=stamp("papers.adam_implicit_bias.evaluate"),  # the plan: which runs exist
    output:
        curves=adam_plan.out_path("curves.csv"),
        table=adam_plan.out_path("table.csv"),
        claims=adam_plan.out_path("claims.json"),
    log:
        **logs("adam_implicit_bias", "evaluate"),
    benchmark:
        bench("adam_implicit_bias", "evaluate")
    threads: 1
    resources:
        **measured("adam_implicit_bias_evaluate"),
    shell:
        step("papers.adam_implicit_bias.evaluate",
             "--curves {output.curves:q} --table {output.table:q} --claims {output.claims:q}")


rule adam_implicit_bias_plot:
    input:
        curves=adam_plan.out_path("curves.csv"),
        table=adam_plan.out_path("table.csv"),
        stamp=stamp("papers.adam_implicit_bias.plot"),
    output:
        ADAM_FIGURES,
    log:
        **logs("adam_implicit_bias", "plot"),
    benchmark:
        bench("adam_implicit_bias", "plot")
    threads: 1
    resources:
        **measured("adam_implicit_bias_plot"),
    shell:
        step("papers.adam_implicit_bias.plot", "--curves {input.curves:q} --table {input.table:q} --figures {output:q}")
