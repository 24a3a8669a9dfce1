"""MLflow as a view on results/: one experiment per paper, one run per job, logged out of the jobs' way.

Files are the truth. Every step writes a *run record* (JSON, declared as the rule's ``log.run``) holding its
tags, params, metrics, curves, inputs and artifact paths, and never imports MLflow (a 2 s import and a SQLite
transaction in every job were a third of the pipeline's wall time). One *track job per paper* runs after the
paper's last job (rule ``track``, rules/track.smk) and logs the paper's new records in one process:

    python -m workflow.core.tracking sync [--paper P ...] [--out results/P/tracking.json]

The same sync, for every paper and trying a store found down, is ``make track-sync`` (``python -m
workflow.tools.track sync``, a maintenance command like the dashboard's): it logs whatever an outage left out. A
record is matched to its run by the ``record_id`` tag, so syncing twice never duplicates a run; a run that is
not FINISHED (an interrupted sync, a live run of a killed job) or lacks the record's metrics or params is
completed (the record's own live run) or replaced, and extra copies of a record are deleted, so a second sync
changes nothing. A long training step may log its curves live (``TRACK_LIVE=1``, ``Step.curve``): it then opens
its run itself, and the track job completes it.

An outage never fails the pipeline and never goes unsaid: the track job lists the records it could not log in
its tracking.json, the Snakefile's onsuccess/onerror print one line from those files (``console_line``), and
the first track job that finds a server down writes a marker (store.MARKER) so that the next ones skip it at
once instead of each waiting out the timeout. A record that sync logged says so (``mlflow_tracked_in``).

Store: ``MLFLOW_TRACKING_URI`` if set (e.g. a tracking server), else an embedded SQLite database at an
absolute path in the repository. Parallel writers on a fresh database would both run the schema migration and
one would crash, so first contact and experiment creation happen under a file lock.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .io import read_json, write_json
from .params import ROOT, shown
from .records import read_record, why_unreadable
from .store import (EXPERIMENT_KIND, MODEL_TRAINING, client, experiment_id, mark_unreachable, run_tags,
                    tracking_uri, wildcard_values)

READS = ()  # no params.yaml section: its rule stamps its code alone (rules/common.smk stamp)
RESULTS = ROOT / "results"
TRACKED = "mlflow_tracked_in"  # record key: the store sync logged the record to (a live run's id alone is not that)
FIX = "make track-sync"


# ---- what a run shows -----------------------------------------------------------------------------------

def _flatten(tree, prefix=""):
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: tree}


def catalog_digests() -> dict[str, dict]:
    """data/raw file name (<name><suffix>, .csv unless the entry says otherwise) -> its catalog entry (the sha256 a
    Dataset digest shows)."""
    from .fetch import catalog, raw_suffix

    return {f"{name}{raw_suffix(entry)}": entry | {"name": name} for name, entry in catalog()["datasets"].items()}


HASHED_INPUT_BYTES = 64 << 20  # an input's digest is its sha256 up to this size (a data set, a model), else its size


def input_digest(path: str) -> str | None:
    """A file's digest for the Dataset column: its sha256 (16 hex), or its size for a very large file."""
    from .io import sha256

    file = ROOT / path
    try:
        size = file.stat().st_size
    except OSError:
        return None
    return sha256(file)[:16] if size <= HASHED_INPUT_BYTES else f"{size}B"


def dataset_inputs(record: dict, catalog: dict):
    """Every file a job read (and, for a fetch job, the raw file it wrote) as an MLflow input: the runs table's
    Dataset column. A catalog data set (data/raw/) carries its name and the catalog's sha256; any other input (a
    prepared data set, a trained model, the runs an evaluation reads) its path and its own sha256."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    out = []
    for role, paths in (("input", record.get("inputs", [])), ("fetched", record.get("outputs", []))):
        for path in paths:
            entry = catalog.get(Path(path).name) if Path(path).parent.name == "raw" else None
            if entry:
                ds = Dataset(name=entry["name"], digest=entry["sha256"][:16], source_type="local", source=path)
            elif role == "input" and (digest := input_digest(path)):
                ds = Dataset(name=path.removeprefix("results/"), digest=digest, source_type="local", source=path)
            else:
                continue
            out.append(DatasetInput(ds, tags=[InputTag("mlflow.data.context", role)]))
    return out


def claim_tags(claims: dict) -> dict[str, str]:
    """An evaluate run's tags: each claim's verdict (gated ones say so), its gate, its nulls' and control's verdicts,
    and the paper's verdict table as the run's description, so that the runs table tells fail from inconclusive."""
    tags = {}
    for c in claims["claims"]:
        tags[f"claim.{c['id']}"] = c["verdict"]
        if c.get("gated_by"):
            tags[f"claim.{c['id']}.gate"] = ", ".join(f"{g} {v}" for g, v in c["gated_by"].items())
            tags[f"claim.{c['id']}.ungated"] = c["ungated_verdict"]
        for role, null in (c.get("nulls") or {}).items():
            tags[f"claim.{c['id']}.{role}"] = null.get("verdict", "none")
        if "verdict" in (c.get("control") or {}):
            tags[f"claim.{c['id']}.control"] = c["control"]["verdict"]
    rows = ["| claim | kind | verdict | ours | paper |", "|---|---|---|---|---|"]
    for c in claims["claims"]:
        verdict = c["verdict"] + (" (gated)" if c.get("gated_by") else "")
        verdict += " (uncontrolled)" if c.get("uncontrolled") and c["kind"] == "reproduction" else ""
        ours = "—" if c["measured"] is None else f"{c['measured']:.4g}"
        rows.append(f"| {c['id']} | {c['kind']} | {verdict} | {ours} | {c['paper_value']} |")
    return tags | {"mlflow.note.content": f"Claims of {claims['paper']} ({claims['profile']} profile)\n\n" + "\n".join(rows)}


def run_params(record: dict) -> dict[str, str]:
    """A run's parameters: the values its step read (params.yaml sections, flattened), each wildcard on its own
    (seed, dataset, method: what a user groups and compares runs by), and the environment."""
    params = {k[:250]: v if isinstance(v, str) else json.dumps(v) for k, v in _flatten(record["params"]).items()}
    params |= {k: v for k, v in wildcard_values(record["wildcards"]).items() if k not in params}
    return params | {f"env.{k}": str(v) for k, v in record.get("environment", {}).items()}


def evaluation_tags(record: dict) -> dict[str, str]:
    """claim_tags() of the claims.json a job wrote (an evaluate job), else none."""
    for path in record.get("outputs", []):
        if Path(path).name == "claims.json" and (ROOT / path).exists():
            return claim_tags(read_json(ROOT / path))
    return {}


def log_record(c, exp_id: str, record: dict, catalog: dict, run_id: str | None = None) -> str:
    """Log one run record as a FINISHED run (completing `run_id` when a live run already exists)."""
    from mlflow.entities import Metric, Param

    ts = int(record["started_ms"])
    already, verdicts = set(), evaluation_tags(record)
    if run_id is None:
        run_id = c.create_run(exp_id, tags=run_tags(record) | verdicts, start_time=ts).info.run_id
    else:  # a live run: it has its tags, maybe some params and curve points
        already = set(c.get_run(run_id).data.params)
        for key, value in verdicts.items():
            c.set_tag(run_id, key, value)
    params = [Param(k, v) for k, v in run_params(record).items()]
    metrics = [Metric(k, float(v), ts, 0) for k, v in record["metrics"].items() if v is not None]
    for name, points in record["curves"].items():  # curves go in batches, not one call per point
        metrics += [Metric(name, float(v), ts, int(s)) for s, v in points]
    params = [p for p in params if p.key not in already]
    for i in range(0, len(params), 100):
        c.log_batch(run_id, params=params[i:i + 100])
    for i in range(0, len(metrics), 1000):
        c.log_batch(run_id, metrics=metrics[i:i + 1000])
    datasets = dataset_inputs(record, catalog)
    if datasets:
        c.log_inputs(run_id, datasets=datasets)
    for path in record["artifacts"]:
        if (ROOT / path).exists():
            c.log_artifact(run_id, str(ROOT / path))
    c.set_terminated(run_id, "FINISHED", end_time=ts + int(1000 * record["seconds"]))
    return run_id


SHARED_EXPERIMENTS = {  # the experiments that are not a paper's, described too
    "data": "Raw data sets fetched from the data catalog (workflow/catalog.yaml), each verified against its sha256: "
            "one run per fetch job, its data set in the Dataset column. Papers read them from data/raw/.",
    "report": "The cross-paper report (results/report/index.html and claims.csv): one run per build, its metrics "
              "the all-papers verdict counts.",
    "Default": "Not used: MLflow creates it. Each paper's runs are in the experiment named after the paper.",
}


def description(paper: str) -> str | None:
    """An experiment's description as plain text (the experiment list shows it unrendered): the paper's title,
    where its card is, its latest verdicts in the headline's five columns."""
    from .params import read_yaml

    if paper in SHARED_EXPERIMENTS:
        return SHARED_EXPERIMENTS[paper]
    folder = ROOT / "workflow" / "papers" / paper
    if not (folder / "claims.yaml").exists():
        return None
    text = f"{read_yaml(folder / 'claims.yaml')['paper']['title']}. Paper card and deviation log: workflow/papers/{paper}/PAPER.md."
    claims = RESULTS / paper / "claims.json"
    if claims.exists():
        s = read_json(claims)
        h, z = s["summary"]["headline"], s["summary"]["sanity"]
        text += (f" Latest verdicts ({s['profile']} profile): reproduction {h['pass_controlled']} pass with no null "
                 f"passing, {h['pass_uncontrolled']} pass uncontrolled, {h['fail']} fail, {h['inconclusive']} "
                 f"inconclusive, {h['gated']} gated ({s['summary']['passes_on_amendment']} passes on an amendment); "
                 f"sanity {z['pass']} pass, {z['fail']} fail, {z['inconclusive']} inconclusive. Each claim's verdict is "
                 f"a tag of the run named evaluate.")
    return text


def describe(c, exp_id: str, paper: str) -> None:
    """The experiment's description and kind (model training: MLflow 3 opens it on its runs, not on traces); the
    Default experiment MLflow made gets them too."""
    c.set_experiment_tag(exp_id, EXPERIMENT_KIND, MODEL_TRAINING)
    text = description(paper)
    if text:
        c.set_experiment_tag(exp_id, "mlflow.note.content", text)
    default = c.get_experiment_by_name("Default")
    if default is not None and default.tags.get("mlflow.note.content") != SHARED_EXPERIMENTS["Default"]:
        c.set_experiment_tag(default.experiment_id, EXPERIMENT_KIND, MODEL_TRAINING)
        c.set_experiment_tag(default.experiment_id, "mlflow.note.content", SHARED_EXPERIMENTS["Default"])


# ---- sync --------------------------------------------------------------------------------------------------

@dataclass
class SyncReport:
    seen: int = 0
    logged: int = 0
    replaced: int = 0
    duplicates_removed: int = 0
    untracked: list = field(default_factory=list)
    unreadable: list = field(default_factory=list)  # files in a record's place that are not one (records.py)
    error: str = ""

    def line(self) -> str:
        skipped = "".join(f"\nskipped {shown(p)}: {why_unreadable(p)}" for p in self.unreadable)
        if not self.untracked and not self.error:
            return (f"{self.seen} run records, {self.logged} newly logged to MLflow ({tracking_uri()}), "
                    f"{self.replaced} incomplete runs replaced, {self.duplicates_removed} duplicates removed" + skipped)
        return (f"MLflow: {len(self.untracked)} of {self.seen} runs could not be tracked ({self.error}); the results "
                f"are safe in results/. Once the store answers, run `{FIX}` to log them." + skipped)


def records_of(results: Path, paper: str) -> list[Path]:
    return sorted((results / paper / "logs").glob("**/*.run.json"))


def existing_runs(c, exp_id: str) -> dict[str, list]:
    """record_id -> the runs carrying it (one query per page, not one per record)."""
    runs, token = {}, None
    while True:
        page = c.search_runs([exp_id], max_results=5000, page_token=token)
        for r in page:
            runs.setdefault(r.data.tags.get("record_id"), []).append(r)
        token = page.token
        if not token:
            return runs


def complete(run, record: dict) -> bool:
    """A run is complete when FINISHED with every metric (curves included) and param of its record: FINISHED alone
    is not enough (a run ended by hand, or by an older sync, can be short of some)."""
    metrics = {k for k, v in record["metrics"].items() if v is not None}
    metrics |= {k for k, points in record["curves"].items() if points}
    params = set(run_params(record))
    return run.info.status == "FINISHED" and metrics <= set(run.data.metrics) and params <= set(run.data.params)


def sync_paper(c, results: Path, paper: str, report: SyncReport, catalog: dict) -> None:
    """Log one experiment's records; two syncs of the same paper (e.g. the shared data records) take turns."""
    from filelock import FileLock

    if not records_of(results, paper):
        return
    with FileLock(str(results / paper / "logs" / ".track.lock"), timeout=600):
        _sync_records(c, paper, records_of(results, paper), report, catalog)


def _sync_records(c, paper: str, paths: list[Path], report: SyncReport, catalog: dict) -> None:
    exp_id = experiment_id(c, paper)
    known = existing_runs(c, exp_id)
    uri = tracking_uri()
    for path in paths:
        record = read_record(path)
        if record is None:  # a failed job's empty file: named, never a reason to stop (nor to fail the track job)
            report.unreadable.append(path)
            continue
        report.seen += 1
        runs = known.get(record["record_id"], [])
        own = record.get("mlflow_run_id")
        # Keep one complete run, the record's own first (so a second sync rewrites nothing); failing that, complete
        # the record's own live run (its curve was watched); every other run of the record goes: duplicates of a
        # killed job or of a re-run sync, runs an interrupted sync left RUNNING with half their metrics.
        keep = min((r for r in runs if complete(r, record)), key=lambda r: r.info.run_id != own, default=None)
        live = None if keep else next((r for r in runs if r.info.run_id == own and r.info.status == "RUNNING"), None)
        for r in runs:
            if r is not keep and r is not live:
                c.delete_run(r.info.run_id)
                report.duplicates_removed += keep is not None
                report.replaced += keep is None
        run_id = keep.info.run_id if keep else log_record(c, exp_id, record, catalog, live.info.run_id if live else None)
        report.logged += keep is None
        if (own, record.get(TRACKED)) != (run_id, uri):  # the record now says where it is tracked
            record["mlflow_run_id"], record[TRACKED] = run_id, uri
            write_json(path, record)
    describe(c, exp_id, paper)


def sync(papers: list[str] | None = None, results: Path = RESULTS, retry: bool = False) -> SyncReport:
    """Log every record of these papers (default: all of results/) that MLflow is missing or has incomplete.

    The unreachable-store marker lives beside results/ (.cache/tracking-unreachable): a track job skips a store
    it names; `retry` (make track-sync) tries anyway.
    """
    if not papers:
        papers = sorted(p.name for p in results.iterdir() if (p / "logs").is_dir()) if results.is_dir() else []
    marker = results.parent / ".cache" / "tracking-unreachable"
    report = SyncReport()
    try:
        c = client(marker, retry)
        catalog = catalog_digests()
        for paper in papers:
            sync_paper(c, results, paper, report, catalog)
    except Exception as exc:  # noqa: BLE001 - an outage must never fail the pipeline: the records are the truth
        mark_unreachable(exc, marker)  # a server that died mid-sync: spare the next track jobs its timeout
        report.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        records = {p: read_record(p) for paper in papers for p in records_of(results, paper)}
        uri = tracking_uri()
        report.untracked = [str(p) for p, rec in records.items() if rec is not None and rec.get(TRACKED) != uri]
        report.unreadable = [p for p, rec in records.items() if rec is None]
        report.seen = len(records) - len(report.unreadable)
    return report


def console_line(results: Path = RESULTS) -> str:
    """The one line the Snakefile prints at the end of a run ('' when nothing is missing): how many records the
    track jobs could not log, and the command that logs them. Reads only the tracking.json files and the records
    they list (no MLflow import): a record logged since then (make track-sync) no longer counts."""
    uri, missing, errors = tracking_uri(), set(), set()
    for summary in sorted(results.glob("*/tracking.json")):
        try:
            s = read_json(summary)
        except (OSError, ValueError):
            continue
        for name in s.get("untracked_records", []):
            record = read_record(results.parent / name)
            if record is not None and record.get(TRACKED) != uri:
                missing.add(name)
                # an error another store gave (MLFLOW_TRACKING_URI changed since) says nothing of this one
                errors.add(s.get("error", "") if s.get("store") == uri else f"not yet logged to {uri}")
    if not missing:
        return ""
    why = "; ".join(sorted(e[:120] for e in errors if e))
    return (f"MLflow: {len(missing)} run record(s) not tracked ({why}); the results are safe in results/. "
            f"Once the store answers, run `{FIX}`.")


def run_sync(papers: list[str] | None, results: Path, retry: bool = False, out: Path | None = None) -> int:
    """A sync as a command: its line on the console, its summary in `out` (the track rule's output); exit 0, except
    for a sync by hand (`retry`, make track-sync) that leaves records untracked."""
    results = results.resolve()  # record paths in tracking.json are relative to its parent
    report = sync(papers, results, retry)
    print(report.line(), file=sys.stderr if report.error else sys.stdout)
    if out:  # what a paper's track job leaves behind (no run ids or times; the store it tried)
        root = results.parent
        write_json(out, {"papers": papers or [], "store": tracking_uri(), "records": report.seen,
                         "untracked": len(report.untracked),
                         "untracked_records": [str(Path(p).relative_to(root)) for p in report.untracked],
                         "unreadable_records": [str(Path(p).relative_to(root)) for p in report.unreadable],
                         "error": report.error})
    # A track job never fails the pipeline (its records are kept); `make track-sync` by hand says it failed.
    return 1 if retry and report.untracked else 0


def main(argv=None) -> int:
    """The track job's command (rules/track.smk)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["sync"], help="sync: log what MLflow is missing of these papers' records")
    parser.add_argument("--paper", action="append", help="only these papers' records (repeatable; default: all)")
    parser.add_argument("--out", type=Path, help="write the sync's summary here (the track rule's output)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results folder (default: results/)")
    parser.add_argument("--retry", action="store_true",
                        help="try a store a track job found unreachable (as make track-sync does); exit 1 if records stay untracked")
    args = parser.parse_args(argv)
    return run_sync(args.paper, args.results, args.retry, args.out)


if __name__ == "__main__":
    sys.exit(main())
