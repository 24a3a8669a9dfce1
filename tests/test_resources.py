"""Per-rule cluster resources from a run's benchmark files (workflow/tools/resources.py, `make resources`)."""
import json

import yaml

from workflow.tools import resources


def bench(results, paper, step, job, rule, seconds, rss):
    path = results / paper / "bench" / step / f"{job}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"s\th:m:s\tmax_rss\n{seconds}\t0:00:00\t{rss}\n")
    record = results / paper / "logs" / step / f"{job}.run.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"record_id": f"{rule}-{job}", "rule": rule}))  # a record names its id and rule


def test_the_largest_job_with_headroom_and_other_rules_kept(tmp_path):
    results, out = tmp_path / "results", tmp_path / "resources.yaml"
    out.write_text("# old\nold_rule: {mem_mb: 640, runtime: 7}  # 1 job(s)\nhex_train: {mem_mb: 9999, runtime: 99}\n")
    bench(results, "hex", "train", "s0", "hex_train", 500.0, 400.0)
    bench(results, "hex", "train", "s1", "hex_train", 540.0, 380.0)
    assert resources.main(["--results", str(results), "--out", str(out)]) == 0
    got = yaml.safe_load(out.read_text())
    assert got["hex_train"] == {"mem_mb": 640, "runtime": 27}  # 400 MB x 1.5 -> 640; 540 s x 3 -> 27 min
    assert got["old_rule"] == {"mem_mb": 640, "runtime": 7}  # not measured by this run: kept


def test_a_run_that_saw_fewer_of_a_rules_jobs_only_raises_the_earlier_entry(tmp_path):
    """A one-paper run measures one `fetch` job where the whole run measured 14: it must not replace the entry with
    its own smaller figures; a run that saw as many jobs as before replaces it (jobs may have become cheaper)."""
    results, out = tmp_path / "results", tmp_path / "resources.yaml"
    out.write_text("fetch: {mem_mb: 1536, runtime: 5}  # 14 job(s), peak 1000 MB, longest 30.0 s\n"
                   "hex_train: {mem_mb: 960, runtime: 31}  # 2 job(s), peak 600 MB, longest 600.0 s\n")
    bench(results, "hex", "fetch", "austen", "fetch", 10.0, 1200.0)
    bench(results, "hex", "train", "s0", "hex_train", 300.0, 400.0)
    bench(results, "hex", "train", "s1", "hex_train", 320.0, 380.0)
    assert resources.main(["--results", str(results), "--out", str(out)]) == 0
    got = yaml.safe_load(out.read_text())
    assert got["fetch"] == {"mem_mb": 1856, "runtime": 5}  # max(1000, 1200) MB x 1.5; max(30, 10) s x 3 -> floor 5
    assert "14 job(s), peak 1200 MB, longest 30.0 s" in out.read_text()
    assert got["hex_train"] == {"mem_mb": 640, "runtime": 16}  # as many jobs as before: replaced (320 s x 3)
