# SCSD: incomplete multi-view multi-label classification, shared codebook + fused-teacher self-distillation
# (spec: shared/papers/scsd.md). data set -> one run per (data set, missing-view rate, method, fold) -> claims -> figures
from workflow.lib import mfeat  # the digits' view names and file paths

SCSD = PARAMS["scsd"]
SCSD_OUT = "results/scsd"
FIGURES["scsd"] = SCSD_FIGURES = expand(f"{SCSD_OUT}/figures/{{fig}}.png",
                                        fig=["main_table", "ablations", "ap_vs_missing_views", "view_weights", "label_graphs"])


def scsd_runs():
    """Every run file: the main grid (each data set at its own r_V) and the r_V sweep (duplicates merged)."""
    plan = SCSD["plan"]
    runs = {(ds, SCSD["datasets"][ds]["missing_view"], m, s)
            for ds in plan["datasets"] for m in plan["methods"][ds] for s in plan["seeds"]}
    sweep = plan["sweep"]
    runs |= {(sweep["dataset"], rv, m, s) for rv in sweep["missing_view"] for m in sweep["methods"] for s in sweep["seeds"]}
    return [f"{SCSD_OUT}/runs/{ds}/rv{rv}/{m}_s{s}.json" for ds, rv, m, s in sorted(runs)]


def scsd_raw(wildcards):
    """Catalog files of a real data set; the generator needs none."""
    source = SCSD["datasets"][wildcards.dataset]["source"]
    if source == "mfeat":
        return [str(mfeat.raw_path(v)) for v in mfeat.VIEWS]
    return [] if source == "synth" else [f"data/raw/{source}.csv"]


wildcard_constraints:
    rv="[0-9.]+",
    method="[a-z_]+",


rule scsd:
    input:
        "results/scsd/tracking.json",  # claims, figures, and every job logged to MLflow
        f"{SCSD_OUT}/claims.json",
        SCSD_FIGURES,


rule scsd_prepare:
    input:
        raw=scsd_raw,
        code=code("scsd", "prepare"),
    output:
        f"{SCSD_OUT}/data/{{dataset}}.npz",
    params:
        **reads("scsd.datasets.{dataset}"),
    log:
        **logs("scsd", "prepare", "{dataset}"),
    benchmark:
        bench("scsd", "prepare", "{dataset}")
    threads: 1
    shell:
        step("papers.scsd.prepare", "--raw {input.raw:q} --out {output:q}")


rule scsd_train:
    input:
        data=f"{SCSD_OUT}/data/{{dataset}}.npz",
        code=code("scsd", "train"),
    output:
        f"{SCSD_OUT}/runs/{{dataset}}/rv{{rv}}/{{method}}_s{{seed}}.json",
    params:
        **reads("scsd.datasets.{dataset}", "scsd.run"),
    log:
        **logs("scsd", "train", "{dataset}/rv{rv}/{method}_s{seed}"),
    benchmark:
        bench("scsd", "train", "{dataset}/rv{rv}/{method}_s{seed}")
    threads: 1
    shell:
        step("papers.scsd.train",
             "--data {input.data:q} --method {wildcards.method} --missing-view {wildcards.rv} --seed {wildcards.seed} --out {output:q}")


rule scsd_evaluate:
    input:
        runs=scsd_runs(),
        claims="workflow/papers/scsd/claims.yaml",
        code=code("scsd", "evaluate"),
    output:
        table=f"{SCSD_OUT}/metrics.csv",
        weights=f"{SCSD_OUT}/view_weights.csv",
        claims=f"{SCSD_OUT}/claims.json",
    params:
        **reads("scsd.plan", "scsd.datasets"),
    log:
        **logs("scsd", "evaluate"),
    benchmark:
        bench("scsd", "evaluate")
    threads: 1
    shell:
        step("papers.scsd.evaluate",
             "{input.runs:q} --table {output.table:q} --weights {output.weights:q} --claims {output.claims:q}")


rule scsd_plot:
    input:
        table=f"{SCSD_OUT}/metrics.csv",
        weights=f"{SCSD_OUT}/view_weights.csv",
        graphs=f"{SCSD_OUT}/runs/{SCSD['plan']['datasets'][0]}/rv{SCSD['datasets'][SCSD['plan']['datasets'][0]]['missing_view']}/scsd_s{SCSD['plan']['seeds'][0]}.json",
        code=code("scsd", "plot"),
    output:
        main_table=f"{SCSD_OUT}/main_table.csv",
        figures=SCSD_FIGURES,
    params:
        **reads("scsd.plan"),
    log:
        **logs("scsd", "plot"),
    benchmark:
        bench("scsd", "plot")
    threads: 1
    shell:
        step("papers.scsd.plot",
             "--table {input.table:q} --weights {input.weights:q} --graphs {input.graphs:q} "
             "--main-table {output.main_table:q} --figures {output.figures:q}")
