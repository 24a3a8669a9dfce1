"""Reading run records (the JSON each job writes as its rule's `log.run`, Step.finish): one place, one rule.

A record is written atomically and only when its step finished (workflow/core/io.py), but a file in its place is
not always one: Snakemake creates every declared log a job did not write, so a failed or killed job leaves an
empty `*.run.json`; a full disk or a hand edit can leave one cut short. Such a file is no record: every reader
(the tracking sync, the report, `make resources`) skips it and can name it, and none stops on it.
"""
from __future__ import annotations

import json
from pathlib import Path


def read_record(path: Path) -> dict | None:
    """The run record at `path`, or None when the file is not one (empty, cut short, unreadable, not a record)."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError):  # ValueError: JSONDecodeError, and a number too long to parse
        return None
    return record if isinstance(record, dict) and "record_id" in record else None


def why_unreadable(path: Path) -> str:
    """A short reason for a file that read_record refused, for the line that names it."""
    try:
        size = Path(path).stat().st_size
    except OSError as err:
        return f"cannot be read ({err.strerror or type(err).__name__})"
    return "empty (the job failed or was killed before it finished)" if size == 0 else "not a complete run record"


def read_records(paths) -> tuple[dict[Path, dict], list[Path]]:
    """({path: record} of the readable ones, [the paths that are not records]), in the order given."""
    found, unreadable = {}, []
    for path in paths:
        record = read_record(path)
        if record is None:
            unreadable.append(Path(path))
        else:
            found[Path(path)] = record
    return found, unreadable
