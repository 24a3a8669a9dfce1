# Raw data shared by papers: fetched from the catalog (workflow/catalog.yaml) and checksum-verified.


rule fetch:
    input:
        catalog="workflow/catalog.yaml",
        code=code(None, "core.fetch"),
        params=reads(),
    output:
        "data/raw/{name}.csv",
    log:
        **logs("data", "fetch", "{name}"),
    benchmark:
        bench("data", "fetch", "{name}")
    threads: 1
    resources:
        **measured("fetch"),
    shell:
        step("core.fetch", "{wildcards.name} {output:q}")
