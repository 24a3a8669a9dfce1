# ICLR 2026 miniature reproductions: the table of contents.
#
#   snakemake --cores 2                          every paper, default profile, then the report
#   snakemake --cores 2 --profile profiles/smoke every paper in under 3 minutes (what CI runs; bench/noop_and_smoke.py)
#   snakemake --cores 2 cosa                     one paper
#
# Parameters: params.yaml (+ profiles/<name>/params.yaml), validated against
# workflow/schemas/ (top level + one schema per paper) here, before any job runs;
# so is every paper's claims.yaml (workflow/schemas/claims.schema.yaml).
import os
import sys

from snakemake.utils import min_version

min_version("9.0")

from workflow.core.claims import ClaimsError, validate_papers
from workflow.core.fetch import DataError, check_raw_readable
from workflow.core.params import ParamsError, check_plan_size, load
from workflow.papers import PAPERS

PROFILE = config.get("profile", "default")
# every job (bin/python) runs under Snakemake's own interpreter; with --software-deployment-method conda, under the
# python of the locked environment it activates (workflow/envs/repro.yaml, declared on every rule by the last line)
IN_CONDA = "conda" in {str(method) for method in workflow.deployment_settings.deployment_method}
os.environ.update(REPRO_PYTHON="python" if IN_CONDA else sys.executable)
try:
    PARAMS = load(PROFILE)
    validate_papers(PAPERS)  # claims.yaml files: kinds, ops, thresholds, units, controls
    check_raw_readable()  # data/raw/: Snakemake reads the files for their checksums while building the DAG
except (ParamsError, ClaimsError, DataError) as err:
    raise WorkflowError(str(err)) from None


include: "rules/common.smk"
include: "rules/data.smk"
for paper in PAPERS:  # rules/<slug>.smk: the paper's data -> runs -> evaluate -> plot
    include: f"rules/{paper}.smk"


include: "rules/report.smk"
include: "rules/track.smk"


try:  # the files the rules plan (a paper's evaluate rule lists its runs), counted before the DAG is built
    check_plan_size(sum(isinstance(f, str) for rule in workflow.rules for f in rule.input), config.get("max_planned_files"))
except ParamsError as err:
    raise WorkflowError(str(err)) from None


localrules: all


rule all:
    input:
        "results/report/index.html",
        expand("results/{paper}/tracking.json", paper=[*PAPERS, "report"]),


housekeeping.declare_software(workflow.rules, SOFTWARE)  # every rule: the locked environment, its name in its command
