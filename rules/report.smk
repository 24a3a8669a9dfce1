# The cross-paper report: claims with the paper's number beside ours, figures, deviations, costs, provenance.


localrules: report


rule report:
    input:
        claims=expand("results/{paper}/claims.json", paper=PAPERS),
        figures=[f for paper in PAPERS for f in FIGURES[paper]],
        cards=expand("workflow/papers/{paper}/PAPER.md", paper=PAPERS),
        template="workflow/report/template.html",
        stamp=stamp("report.build"),
    output:
        html="results/report/index.html",
        csv="results/report/claims.csv",
        verdicts="results/report/verdicts.md",
    log:
        **logs("report", "build"),
    benchmark:
        bench("report", "build")
    threads: 1
    resources:
        **measured("report"),
    shell:
        step("report.build", f"--papers {' '.join(PAPERS)} --figures {{input.figures:q}} --html {{output.html:q}} --csv {{output.csv:q}} --verdicts {{output.verdicts:q}}")
