"""Per-rule cluster resources from a run's benchmark files (workflow/core/resources.py, `make resources`)."""
import json

import yaml

from workflow.core import resources


def bench(results, paper, step, job, rule, seconds, rss):
    path = results / paper / "bench" / step / f"{job}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"s\th:m:s\tmax_rss\n{seconds}\t0:00:00\t{rss}\n")
    record = results / paper / "logs" / step / f"{job}.run.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"rule": rule}))


def test_the_largest_job_with_headroom_and_other_rules_kept(tmp_path):
    results, out = tmp_path / "results", tmp_path / "resources.yaml"
    out.write_text("# old\nold_rule: {mem_mb: 640, runtime: 7}  # 1 job(s)\nhex_train: {mem_mb: 9999, runtime: 99}\n")
    bench(results, "hex", "train", "s0", "hex_train", 500.0, 400.0)
    bench(results, "hex", "train", "s1", "hex_train", 540.0, 380.0)
    assert resources.main(["--results", str(results), "--out", str(out)]) == 0
    got = yaml.safe_load(out.read_text())
    assert got["hex_train"] == {"mem_mb": 640, "runtime": 27}  # 400 MB x 1.5 -> 640; 540 s x 3 -> 27 min
    assert got["old_rule"] == {"mem_mb": 640, "runtime": 7}  # not measured by this run: kept
