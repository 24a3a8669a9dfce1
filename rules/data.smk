# Raw data shared by papers: fetched from the catalog (workflow/catalog.yaml) and checksum-verified.


rule fetch:
    input:
        catalog="workflow/catalog.yaml",
        code=code(None, "core.fetch"),
        params=reads(),
    output:
        "data/raw/{name}.{suffix}",  # .csv unless the catalog entry says otherwise (suffix: .idx)
    wildcard_constraints:
        name="[A-Za-z0-9_]+",
        suffix="csv|idx",
    log:
        **logs("data", "fetch", "{name}.{suffix}"),
    benchmark:
        bench("data", "fetch", "{name}.{suffix}")
    threads: 1
    resources:
        **measured("fetch"),
    shell:
        step("core.fetch", "{wildcards.name} {output:q}")
