# ICLR 2026 miniature reproductions: the table of contents.
#
#   snakemake --cores 2                          every paper, default profile, then the report
#   snakemake --cores 2 --profile profiles/smoke every paper in about a minute each (what CI runs)
#   snakemake --cores 2 cosa                     one paper
#
# Parameters: params.yaml (+ profiles/<name>/params.yaml), validated against
# workflow/schemas/ (top level + one schema per paper) here, before any job runs;
# so is every paper's claims.yaml (workflow/schemas/claims.schema.yaml).
from snakemake.utils import min_version

min_version("9.0")

from workflow.core.claims import ClaimsError, validate_papers
from workflow.core.params import ParamsError, load

PAPERS = ["adam_implicit_bias", "cosa", "hypergraph_sparsify", "neuromanifolds", "lnsp", "soft_qd", "stbp", "fsd_cap", "fairness_pareto", "scsd"]

PROFILE = config.get("profile", "default")
try:
    PARAMS = load(PROFILE)
    validate_papers(PAPERS)  # claims.yaml files: kinds, ops, thresholds, units, controls
except (ParamsError, ClaimsError) as err:
    raise WorkflowError(str(err)) from None


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/adam_implicit_bias.smk"
include: "rules/cosa.smk"
include: "rules/hypergraph_sparsify.smk"
include: "rules/neuromanifolds.smk"
include: "rules/lnsp.smk"
include: "rules/soft_qd.smk"
include: "rules/stbp.smk"
include: "rules/fsd_cap.smk"
include: "rules/fairness_pareto.smk"
include: "rules/scsd.smk"
include: "rules/report.smk"


rule all:
    input:
        "results/report/index.html",
