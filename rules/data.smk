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
    shell:
        # A data set restored from its verified copy (the archive is corrupt, workflow/core/fetch.py) succeeds, and
        # a job's output only reaches its log: the warning is repeated on the console so that it is seen.
        "{{ " + step("core.fetch", "{wildcards.name} {output:q}") + "; }} && {{ grep -h '^warning:' {log.out:q} >&2 || true; }}"
