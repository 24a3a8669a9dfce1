"""One package per paper. PAPERS is the paper list, written once: the Snakefile includes rules/<slug>.smk for
each, the report shows them in this order, and the tests read it from here."""

PAPERS = ["adam_implicit_bias", "cosa", "hypergraph_sparsify", "neuromanifolds", "lnsp", "soft_qd", "stbp",
          "fsd_cap", "fairness_pareto", "scsd", "mppd_tv", "tp_spikformer", "hex", "refusion", "simuhome",
          "code_reasoning", "semhitok", "internspatial", "aurelius"]
