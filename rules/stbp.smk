# STBP: continual spatio-temporal forecasting with a frozen backbone + scalable pattern bank (spec: shared/papers/stbp.md)
# yearly tasks per data set -> each (method, seed) run through every year in order -> tables + claims -> figures
STBP = PARAMS["stbp"]
STBP_OUT = "results/stbp"
FIGURES["stbp"] = STBP_FIGURES = expand(f"{STBP_OUT}/figures/{{fig}}.png", fig=["table_main", "fig_a_mae_per_year", "fig_b_cost", "fig_c_nodes"])
STBP_RUNS = [f"{STBP_OUT}/runs/{ds}/{m}_s{s}.json"
             for ds, plan in STBP["plan"].items()
             for group in ("main", "ablations")
             for m in plan[group]["methods"] for s in plan[group]["seeds"]]


wildcard_constraints:
    stbp_method="[a-z_]+",


def stbp_raw(wildcards):
    """The catalog file of a real data set; the generator needs none."""
    return [] if wildcards.dataset == "stream" else [f"data/raw/{wildcards.dataset}.csv"]


rule stbp:
    input:
        "results/stbp/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{STBP_OUT}/claims.json",
        STBP_FIGURES,


rule stbp_data:
    input:
        raw=stbp_raw,
        code=code("stbp", "data"),
    output:
        f"{STBP_OUT}/data/{{dataset}}.npz",
    params:
        **reads("stbp.data.{dataset}"),
    log:
        **logs("stbp", "data", "{dataset}"),
    benchmark:
        bench("stbp", "data", "{dataset}")
    threads: 1
    shell:
        step("papers.stbp.data", "{wildcards.dataset} --raw={input.raw:q} --out {output:q}")


rule stbp_train:
    input:
        data=f"{STBP_OUT}/data/{{dataset}}.npz",
        code=code("stbp", "train"),
    output:
        f"{STBP_OUT}/runs/{{dataset}}/{{stbp_method}}_s{{seed}}.json",
    params:
        **reads("stbp.windows", "stbp.model", "stbp.train.{dataset}"),
    log:
        **logs("stbp", "train", "{dataset}/{stbp_method}_s{seed}"),
    benchmark:
        bench("stbp", "train", "{dataset}/{stbp_method}_s{seed}")
    threads: 1
    shell:
        step("papers.stbp.train", "--data {input.data:q} --method {wildcards.stbp_method} --seed {wildcards.seed} --out {output:q}")


rule stbp_evaluate:
    input:
        runs=STBP_RUNS,
        claims="workflow/papers/stbp/claims.yaml",
        code=code("stbp", "evaluate"),
    output:
        years=f"{STBP_OUT}/years.csv",
        table=f"{STBP_OUT}/table.csv",
        backward=f"{STBP_OUT}/backward.csv",
        claims=f"{STBP_OUT}/claims.json",
    params:
        **reads(),
    log:
        **logs("stbp", "evaluate"),
    benchmark:
        bench("stbp", "evaluate")
    threads: 1
    shell:
        step("papers.stbp.evaluate",
             "{input.runs:q} --years {output.years:q} --table {output.table:q} --backward {output.backward:q} --claims {output.claims:q}")


rule stbp_plot:
    input:
        years=f"{STBP_OUT}/years.csv",
        table=f"{STBP_OUT}/table.csv",
        code=code("stbp", "plot"),
    output:
        STBP_FIGURES,
    params:
        **reads(),
    log:
        **logs("stbp", "plot"),
    benchmark:
        bench("stbp", "plot")
    threads: 1
    shell:
        step("papers.stbp.plot", "--years {input.years:q} --table {input.table:q} --figures {output:q}")
