# Learning on a Razor's Edge: polynomial neuromanifolds (spec: shared/papers/neuromanifolds.md)
# ranks (E1, E2, E4) + fibers for both sigmas (E3; x^r is the control) + critical exposure of both network kinds (E5)
# + sparsity (E6) -> evaluation + claims (each claim also judged on its control) -> figures.
# Seven jobs whatever the params: each experiment is one job (its architectures, data sets and seeds run inside it).
localrules: neuromanifolds, neuromanifolds_evaluate, neuromanifolds_plot


from workflow.papers.neuromanifolds import plan as nm_plan

FIGURES["neuromanifolds"] = NM_FIGURES = nm_plan.figure_paths()


rule neuromanifolds:
    input:
        "results/neuromanifolds/tracking.json",  # claims, figures, and every job logged to MLflow
        nm_plan.out_path("claims.json"),
        NM_FIGURES,


rule neuromanifolds_ranks:
    input:
        stamp=stamp("papers.neuromanifolds.ranks"),
    output:
        dimensions=nm_plan.out_path("ranks/dimensions.csv"),
        singular=nm_plan.out_path("ranks/singular.csv"),
        spectra=nm_plan.out_path("ranks/spectra.npz"),
    log:
        **logs("neuromanifolds", "ranks"),
    benchmark:
        bench("neuromanifolds", "ranks")
    threads: 1
    resources:
        **measured("neuromanifolds_ranks"),
    shell:
        step("papers.neuromanifolds.ranks",
             "--dimensions {output.dimensions:q} --singular {output.singular:q} --spectra {output.spectra:q}")


rule neuromanifolds_fibers:  # E3 for generic sigma (C1f, C3f) and for x^r (their control), one job
    input:
        stamp=stamp("papers.neuromanifolds.fibers"),
    output:
        generic=nm_plan.out_path("fibers/generic.csv"),
        monomial=nm_plan.out_path("fibers/monomial.csv"),
    log:
        **logs("neuromanifolds", "fibers"),
    benchmark:
        bench("neuromanifolds", "fibers")
    threads: 1
    resources:
        **measured("neuromanifolds_fibers"),
    shell:
        step("papers.neuromanifolds.fibers", "--generic {output.generic:q} --monomial {output.monomial:q}")


rule neuromanifolds_critical:  # E5 for the MLP and the CNN (each the other's control), one job
    input:
        stamp=stamp("papers.neuromanifolds.critical"),
    output:
        mlp=nm_plan.out_path("critical/mlp.csv"),
        cnn=nm_plan.out_path("critical/cnn.csv"),
    log:
        **logs("neuromanifolds", "critical"),
    benchmark:
        bench("neuromanifolds", "critical")
    threads: 1
    resources:
        **measured("neuromanifolds_critical"),
    shell:
        step("papers.neuromanifolds.critical", "--mlp {output.mlp:q} --cnn {output.cnn:q}")


rule neuromanifolds_sparsity:
    input:
        stamp=stamp("papers.neuromanifolds.sparsity"),
    output:
        nm_plan.out_path("sparsity/sparsity.csv"),
    log:
        **logs("neuromanifolds", "sparsity"),
    benchmark:
        bench("neuromanifolds", "sparsity")
    threads: 1
    resources:
        **measured("neuromanifolds_sparsity"),
    shell:
        step("papers.neuromanifolds.sparsity", "--out {output:q}")


rule neuromanifolds_evaluate:
    input:
        dimensions=nm_plan.out_path("ranks/dimensions.csv"),
        singular=nm_plan.out_path("ranks/singular.csv"),
        spectra=nm_plan.out_path("ranks/spectra.npz"),
        fibers=nm_plan.out_path("fibers/generic.csv"),
        fibers_control=nm_plan.out_path("fibers/monomial.csv"),
        critical=[nm_plan.out_path("critical/mlp.csv"), nm_plan.out_path("critical/cnn.csv")],
        sparsity=nm_plan.out_path("sparsity/sparsity.csv"),
        claims="workflow/papers/neuromanifolds/claims.yaml",
        stamp=stamp("papers.neuromanifolds.evaluate"),
    output:
        table=nm_plan.out_path("table_a.csv"),
        spectra=nm_plan.out_path("spectra.csv"),
        gradients=nm_plan.out_path("gradients.csv"),
        claims=nm_plan.out_path("claims.json"),
    log:
        **logs("neuromanifolds", "evaluate"),
    benchmark:
        bench("neuromanifolds", "evaluate")
    threads: 1
    resources:
        **measured("neuromanifolds_evaluate"),
    shell:
        step("papers.neuromanifolds.evaluate",
             "--dimensions {input.dimensions:q} --singular {input.singular:q} --spectra {input.spectra:q} "
             "--fibers {input.fibers:q} --fibers-control {input.fibers_control:q} --critical {input.critical:q} --sparsity {input.sparsity:q} "
             "--table {output.table:q} --spectra-table {output.spectra:q} --gradients {output.gradients:q} --claims {output.claims:q}")


rule neuromanifolds_plot:
    input:
        table=nm_plan.out_path("table_a.csv"),
        spectra=nm_plan.out_path("spectra.csv"),
        gradients=nm_plan.out_path("gradients.csv"),
        stamp=stamp("papers.neuromanifolds.plot"),
    output:
        NM_FIGURES,
    log:
        **logs("neuromanifolds", "plot"),
    benchmark:
        bench("neuromanifolds", "plot")
    threads: 1
    resources:
        **measured("neuromanifolds_plot"),
    shell:
        step("papers.neuromanifolds.plot",
             "--table {input.table:q} --spectra {input.spectra:q} --gradients {input.gradients:q} --figures {output:q}")
