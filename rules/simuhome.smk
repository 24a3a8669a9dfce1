# SimuHome: a Matter smart-home simulator and its agent benchmark (spec: shared/papers/simuhome.md).
# episodes per seed -> every agent configuration per seed, and the simulator's self-test per seed -> claims -> figures
localrules: simuhome, simuhome_evaluate, simuhome_plot


from workflow.papers.simuhome import plan as simuhome_plan

SIMUHOME = PARAMS["simuhome"]
check_plan(simuhome_plan, SIMUHOME)
FIGURES["simuhome"] = SIMUHOME_FIGURES = simuhome_plan.figure_paths()


rule simuhome:
    input:
        "results/simuhome/tracking.json",  # claims, figures, and every job logged to MLflow
        simuhome_plan.out_path("claims.json"),
        SIMUHOME_FIGURES,


rule simuhome_generate:
    input:
        stamp=stamp("papers.simuhome.generate"),
    output:
        simuhome_plan.episodes_path("{seed}"),
    log:
        **logs("simuhome", "generate", "s{seed}"),
    benchmark:
        bench("simuhome", "generate", "s{seed}")
    threads: 1
    resources:
        **measured("simuhome_generate"),
    shell:
        step("papers.simuhome.generate", "--seed {wildcards.seed} --out {output:q}")


rule simuhome_selftest:
    input:
        stamp=stamp("papers.simuhome.selftest"),
    output:
        result=simuhome_plan.fidelity_path("{seed}"),
        trace=simuhome_plan.trace_path("{seed}"),
    log:
        **logs("simuhome", "selftest", "s{seed}"),
    benchmark:
        bench("simuhome", "selftest", "s{seed}")
    threads: 1
    resources:
        **measured("simuhome_selftest"),
    shell:
        step("papers.simuhome.selftest", "--seed {wildcards.seed} --out {output.result:q} --trace {output.trace:q}")


rule simuhome_play:
    input:
        episodes=simuhome_plan.episodes_path("{seed}"),
        stamp=stamp("papers.simuhome.play"),
    output:
        runs=simuhome_plan.runs_path("{agent}", "{seed}"),
        trajectories=simuhome_plan.trajectories_path("{agent}", "{seed}"),
    wildcard_constraints:
        agent="|".join(simuhome_plan.AGENTS),
    log:
        **logs("simuhome", "play", "{agent}/s{seed}"),
    benchmark:
        bench("simuhome", "play", "{agent}/s{seed}")
    threads: 1
    resources:
        **measured("simuhome_play"),
    shell:
        step("papers.simuhome.play", "--episodes {input.episodes:q} --agent {wildcards.agent} --seed {wildcards.seed} "
             "--out {output.runs:q} --trajectories {output.trajectories:q}")


rule simuhome_evaluate:
    input:
        runs=simuhome_plan.all_runs(SIMUHOME["plan"]),
        fidelity=simuhome_plan.all_fidelity(SIMUHOME["plan"]),
        claims="workflow/papers/simuhome/claims.yaml",
        stamp=stamp("papers.simuhome.evaluate"),  # the plan: which runs exist
    output:
        table=simuhome_plan.out_path("table_success.csv"),
        agents=simuhome_plan.out_path("agents.csv"),
        claims=simuhome_plan.out_path("claims.json"),
    log:
        **logs("simuhome", "evaluate"),
    benchmark:
        bench("simuhome", "evaluate")
    threads: 1
    resources:
        **measured("simuhome_evaluate"),
    shell:
        step("papers.simuhome.evaluate", "--table {output.table:q} --agents {output.agents:q} --claims {output.claims:q}")


rule simuhome_plot:
    input:
        table=simuhome_plan.out_path("table_success.csv"),
        agents=simuhome_plan.out_path("agents.csv"),
        traces=[simuhome_plan.trace_path(s) for s in SIMUHOME["plan"]["seeds"]],  # the step finds them in the plan
        stamp=stamp("papers.simuhome.plot"),
    output:
        SIMUHOME_FIGURES,
    log:
        **logs("simuhome", "plot"),
    benchmark:
        bench("simuhome", "plot")
    threads: 1
    resources:
        **measured("simuhome_plot"),
    shell:
        step("papers.simuhome.plot", "--table {input.table:q} --agents {input.agents:q} --figures {output:q}")
