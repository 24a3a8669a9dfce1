"""The jobs of this paper, as pure functions of its params section (params.yaml: adam_implicit_bias).

The rule file builds its job lists from these, and the train and evaluate steps find their runs and files through
them: no command line grows with the number of runs (a list of 10,000 paths would exceed the kernel's argument
limit).

A run is one (data set, algorithm) pair. One train job makes a group of runs on one data set, since a single run
takes about two seconds: group ``family`` is the algorithms its family's plan lists (``plan.gr`` or
``plan.gauss``), group ``sweep`` (the first ``datasets.batch_sweep`` GR sets) the batch-size sweep, less the runs
its family group already makes, group ``placebo`` the placebos of claims.yaml that the family's ``plan.placebo`` lists
(on every data set of the family). Every run is deterministic (its only random numbers are a placebo's seeded
rotation), so grouping changes no result.
"""
from __future__ import annotations

OUT = "results/adam_implicit_bias"
# Every batch-sweep data set also runs these, so that each batch size has its b = 1 and full-batch ends (C5).
SWEEP_ENDS = ["inc_adam", "det_adam", "inc_signum", "det_signum", "inc_gd", "det_gd"]
GROUPS = ("family", "sweep", "placebo")
FIGURES = ("fig1_gr_cosines", "fig3_gauss_fixed_point", "fig6_batch_size")


def family_and_index(dataset: str) -> tuple[str, int]:
    """'gr3' -> ('gr', 3)."""
    family = dataset.rstrip("0123456789")
    if family not in ("gr", "gauss") or family == dataset:
        raise ValueError(f"data set '{dataset}' is not <family><index> with family gr or gauss")
    return family, int(dataset[len(family):])


def datasets(p: dict) -> list[str]:
    n = p["datasets"]
    return [f"gr{k}" for k in range(n["gr"])] + [f"gauss{k}" for k in range(n["gauss"])]


def sweep_datasets(p: dict) -> list[str]:
    """The GR sets that also run the batch-size sweep (C5, paper Fig. 6)."""
    n = p["datasets"]
    return [f"gr{k}" for k in range(min(n["batch_sweep"], n["gr"]))]


def algorithms(plan: dict, family: str, group: str) -> list[str]:
    """The algorithms one train job runs (``plan``: the params' ``plan`` section), in the order it runs them."""
    if group == "family":
        return list(plan[family])
    if group == "sweep":
        return [a for a in dict.fromkeys(plan["batch_sweep"] + SWEEP_ENDS) if a not in plan["gr"]]
    if group == "placebo":
        return list(plan.get("placebo", {}).get(family, []))
    raise ValueError(f"unknown group '{group}'; expected one of {GROUPS}")


def train_jobs(p: dict) -> list[tuple[str, str]]:
    """(data set, group) of every train job that has runs to make."""
    named = ({a for key in ("gr", "gauss", "batch_sweep") for a in p["plan"][key]} | set(SWEEP_ENDS)
             | {a for names in p["plan"].get("placebo", {}).values() for a in names})
    if named - set(p["algorithms"]):
        raise ValueError(f"adam_implicit_bias: plan names algorithms that are not in `algorithms`: "
                         f"{sorted(named - set(p['algorithms']))}")
    jobs = ([(ds, "family") for ds in datasets(p)] + [(ds, "sweep") for ds in sweep_datasets(p)]
            + [(ds, "placebo") for ds in datasets(p)])
    return [(ds, group) for ds, group in jobs if algorithms(p["plan"], family_and_index(ds)[0], group)]


def data_path(dataset: str, ext: str = "npz") -> str:
    """A data set (.npz) or its summary (.json)."""
    return f"{OUT}/data/{dataset}.{ext}"


def train_path(dataset: str, group: str) -> str:
    return f"{OUT}/train/{dataset}/{group}.npz"


def train_paths(p: dict) -> list[str]:
    return [train_path(ds, group) for ds, group in train_jobs(p)]


def run_files(p: dict) -> dict[tuple[str, str], str]:
    """{(data set, algorithm): the train job's file that holds the run}, sorted by (data set, algorithm)."""
    files = {(ds, algo): train_path(ds, group) for ds, group in train_jobs(p)
             for algo in algorithms(p["plan"], family_and_index(ds)[0], group)}
    return dict(sorted(files.items()))


def runs(p: dict) -> list[tuple[str, str]]:
    """(data set, algorithm) pairs: GR and Gauss families, plus the batch sweep on the first GR sets."""
    return list(run_files(p))


def out_path(name: str) -> str:
    """One of the paper's results: curves.csv, table.csv, claims.json (the evaluate step's)."""
    return f"{OUT}/{name}"


def figure_paths() -> list[str]:
    return [f"{OUT}/figures/{fig}.png" for fig in FIGURES]
