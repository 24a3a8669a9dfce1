# Raw data shared by papers: fetched from the catalog (workflow/catalog.yaml) and checksum-verified.
from workflow.core.fetch import catalog, raw_suffix

# The file formats the catalog names (csv, idx, rdb, ...): an entry with a new `suffix:` needs no edit here.
RAW_SUFFIXES = "|".join(sorted({raw_suffix(entry).lstrip(".") for entry in catalog()["datasets"].values()}))


rule fetch:
    input:
        catalog="workflow/catalog.yaml",
        stamp=stamp("core.fetch"),
    output:
        "data/raw/{name}.{suffix}",  # .csv unless the catalog entry says otherwise (suffix: .idx)
    wildcard_constraints:
        name="[A-Za-z0-9_]+",
        suffix=RAW_SUFFIXES,
    log:
        **logs("data", "fetch", "{name}.{suffix}"),
    benchmark:
        bench("data", "fetch", "{name}.{suffix}")
    threads: 1
    resources:
        **measured("fetch"),
    shell:
        step("core.fetch", "{wildcards.name} {output:q}")
