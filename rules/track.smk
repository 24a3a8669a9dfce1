# MLflow, out of the jobs' way: no job imports MLflow. One track job per paper runs after the paper's last job
# and logs the run records of all its jobs (and of the shared fetch jobs) in one process; the report's track job
# does the same for the report. See workflow/core/tracking.py; `make track-sync` does it by hand after an outage.
# The job never fails on a tracking outage: it lists the records it could not log in tracking.json (onsuccess /
# onerror print them as one line), and a store found down is skipped at once by the next track jobs.
localrules: track


TRACKED_AFTER = {paper: [f"results/{paper}/claims.json", *FIGURES[paper]] for paper in PAPERS} | {
    "report": ["results/report/index.html"]}


rule track:
    input:
        after=lambda wildcards: TRACKED_AFTER[wildcards.paper],
        stamp=stamp("core.tracking"),
    output:
        "results/{paper}/tracking.json",
    log:
        "results/{paper}/logs/track.log",
    benchmark:
        "results/{paper}/bench/track.tsv"
    threads: 1
    resources:
        **measured("track"),
    wildcard_constraints:
        paper="|".join(TRACKED_AFTER),
    shell:
        "bin/python -m workflow.run core.tracking sync --paper {wildcards.paper} --paper data --out {output:q} --log {log:q}"
