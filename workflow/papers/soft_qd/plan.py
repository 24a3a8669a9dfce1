"""The jobs of this paper, as pure functions of its params section (params.yaml: soft_qd).

One run job per benchmark x m x seed runs every method planned there in turn (the baselines, SQUAD, and its
control and placebo where they run: the claims' cells), each from its own seed as before: a job's start-up (python, torch, ribs and its
numba compilation) is paid once for all of them. The rule file builds its job lists from these functions and the
evaluate step finds the same files through them: no command line grows with the number of runs.
"""
from __future__ import annotations

OUT = "results/soft_qd"
BENCHMARKS = ("rastrigin", "sphere")  # = methods.BENCHMARKS (a test checks it); here without torch
BASELINES = ("cma_mae", "cma_maega", "map_elites")
CONTROL = "squad_norep"  # SQUAD with the repulsion term removed (K = 0 neighbours): fitness ascent only
PLACEBO = "squad_randnn"  # SQUAD repelled from K random population members instead of its K nearest (C1, C2's placebo)
METHODS = ("squad", *BASELINES, CONTROL, PLACEBO)
SQUAD_VARIANTS = ("squad", CONTROL, PLACEBO)  # the runs with SQUAD's knobs
HEATMAP_BENCHMARK = "rastrigin"  # Fig. C's archives: every method on LP-Rastrigin at heatmap.m, heatmap.seed
FIGURES = ("fig_a_scalability", "fig_b_sigma_sweep", "fig_c_archives_m2", "fig_d_soft_qd_limit", "table_metrics")


def per_m(value, m: int):
    """A knob given per behaviour dimension ({m4: ..., m16: ...}) or once for all."""
    if not isinstance(value, dict):
        return value
    if f"m{m}" not in value:
        raise ValueError(f"no value for m = {m} in {value}: add 'm{m}: ...' to this knob in params.yaml")
    return value[f"m{m}"]


def budget(p: dict) -> int:
    """The shared evaluation budget E = N x (epochs + 1) of every method (p: the `budget` section)."""
    return int(p["N"]) * (int(p["epochs"]) + 1)


def runs(p: dict) -> list[tuple[str, int, str, int]]:
    """Every (benchmark, m, method, seed) run, in a fixed order: the benchmark grid, the control, then the heatmap
    runs that the grid does not already hold."""
    out = [(bench, m, method, seed) for bench, b in p["benchmarks"].items() for m in b["ms"] for method in p["methods"]
           for seed in b.get("seeds", p["seeds"])]
    out += [(p["control"]["benchmark"], m, CONTROL, seed) for m in p["control"]["ms"] for seed in p["seeds"]]
    out += [(p["control"]["benchmark"], m, PLACEBO, seed) for m in p["control"]["ms"] for seed in p["seeds"]]
    out += [(HEATMAP_BENCHMARK, p["heatmap"]["m"], method, p["heatmap"]["seed"]) for method in p["methods"]]
    return list(dict.fromkeys(out))  # without repeats, first occurrence kept


def jobs(p: dict) -> list[tuple[str, int, int]]:
    """The run jobs: one per (benchmark, m, seed) that has runs, in the order of runs()."""
    return list(dict.fromkeys((bench, m, seed) for bench, m, _, seed in runs(p)))


def job_methods(p: dict, benchmark: str, m: int, seed: int) -> list[str]:
    """The methods one run job runs, in the order of runs()."""
    return [method for bench, mm, method, s in runs(p) if (bench, mm, s) == (benchmark, m, seed)]


def job_path(benchmark: str, m: int, seed: int) -> str:
    return f"{OUT}/runs/{benchmark}/m{m}/s{seed}.npz"


def job_paths(p: dict) -> list[str]:
    return [job_path(*job) for job in jobs(p)]


def heatmap_path(p: dict) -> str:
    return job_path(HEATMAP_BENCHMARK, p["heatmap"]["m"], p["heatmap"]["seed"])


def run_ms(p: dict) -> list[int]:
    """The behaviour dimensions that have runs (each needs its evaluation archive)."""
    return sorted({m for _, m, _, _ in runs(p)})


def archive_ms(p: dict) -> list[int]:
    """Every m with an evaluation archive: the runs', the sigma sweep's and the tuning grids'."""
    return sorted(set(run_ms(p)) | {p["sweep"]["m"]} | set(p["tuning"]["ms"]))


def archive_path(m: int) -> str:
    return f"{OUT}/archives/m{m}.npz"


def tuning_grids(p: dict) -> list[tuple[str, int]]:
    """(method, m) of every tuning grid (`snakemake soft_qd_tune`)."""
    return [(method, m) for method in p["tuning"]["grid"] for m in p["tuning"]["ms"]]


def tuning_path(method: str, m: int) -> str:
    return f"{OUT}/tuning/{method}_m{m}.csv"


def tuning_paths(p: dict) -> list[str]:
    return [tuning_path(*grid) for grid in tuning_grids(p)]


def out_path(name: str) -> str:
    """One of the paper's results: sweep.csv (the sweep step's), theory/trials.csv and theory/limit.csv (the theory
    step's), metrics.csv, summary.csv, claims.json (the evaluate step's), tuning/winners.csv (the tune_winners
    step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]

