"""Recovery and determinism, as a user meets them: a run killed at random points resumes with `snakemake` alone
(no --unlock, no leftovers) to the results of a clean run, differing from them only in the files that
workflow/timing.yaml lists as carrying wall-clock figures; as most jobs then run afresh, this is the determinism test
too."""
import fnmatch
import hashlib
import json
import os
import random
import signal
import subprocess
import time

import yaml

from conftest import BIN, ROOT, copy_repo, env, run

TIMING = yaml.safe_load((ROOT / "workflow/timing.yaml").read_text())
TIMING_GLOBS = TIMING["everywhere"] + [g for globs in TIMING["papers"].values() for g in globs] + TIMING["float_noise"]
SMOKE = [str(BIN / "snakemake"), "--profile", "profiles/smoke"]


# written by `dvc repro dag_shape` (DVC's check that dvc.yaml is current), which test_dvc.py runs in the shared
# smoke repository: not an output of the snakemake run
NOT_RUN_OUTPUTS = ["dvc_dag_shape.txt"]


def result_digests(repo) -> dict[str, str]:
    """sha256 of every file under results/ that carries no time."""
    out = {}
    for path in sorted((repo / "results").rglob("*")):
        name = str(path.relative_to(repo / "results"))
        if path.is_file() and not any(fnmatch.fnmatch(name, g) for g in TIMING_GLOBS + NOT_RUN_OUTPUTS):
            out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def differences(a: dict, b: dict) -> list[str]:
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def verdicts(repo) -> dict[str, list]:
    """The verdicts (claim, its checks, its control) of the claims files that float noise keeps out of the digests:
    their values may move in a late digit, their verdicts may not."""
    out = {}
    for glob in TIMING["float_noise"]:
        for path in (repo / "results").glob(glob):
            if path.name == "claims.json":
                claims = json.loads(path.read_text())["claims"]
                out[str(path)] = [(c["id"], c["verdict"], [k["verdict"] for k in c["checks"]],
                                   (c.get("control") or {}).get("verdict")) for c in claims]
    return {str(k).split("results/", 1)[1]: v for k, v in out.items()}


def test_timing_globs_name_files_that_exist(smoke_repo):
    """The list stays honest: every paper's glob matches a file of the smoke run."""
    names = [str(p.relative_to(smoke_repo / "results")) for p in (smoke_repo / "results").rglob("*") if p.is_file()]
    for glob in TIMING_GLOBS:
        assert any(fnmatch.fnmatch(n, glob) for n in names), f"workflow/timing.yaml: {glob} matches nothing"


def test_a_run_killed_at_three_random_points_resumes_to_a_clean_runs_results(smoke_repo, tmp_path):
    """Also the determinism test: the kills come in the first half minute, so the resumed run computes nearly every
    job afresh, and its results must equal the shared clean run's byte for byte outside the timing files (a separate
    pair of clean runs would cost one more whole smoke run and check nothing this does not)."""
    repo = copy_repo(tmp_path)
    rng = random.Random(2026)
    points = [round(rng.uniform(4, 30), 1) for _ in range(3)]
    for seconds in points:  # kill -9 the whole run (snakemake and its jobs) mid-flight, three times
        proc = subprocess.Popen(SMOKE, cwd=repo, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(seconds)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert list((repo / ".snakemake/locks").iterdir()), "the kill left no lock: the test did not kill a live run"
    done = run(SMOKE, repo)  # the README's command again: no --unlock, no cleaning by hand
    assert "Removed a stale lock" in done.stderr
    assert not list((repo / "results").rglob(".*.tmp*")), "a partial write was left behind"
    assert len(result_digests(repo)) > 100
    assert differences(result_digests(repo), result_digests(smoke_repo)) == [], f"killed at {points} s"
    assert verdicts(repo) == verdicts(smoke_repo), f"killed at {points} s"
