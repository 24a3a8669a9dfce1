"""MLflow by hand: log what an outage left out, and the dashboard's address and pages.

    python -m workflow.tools.track sync [--paper P ...]   # make track-sync: every record MLflow is missing, trying a
                                                          # store the track jobs found down; exit 1 if some stay out
    python -m workflow.tools.track uri                    # the store's URI (make mlflow-ui serves it)
    python -m workflow.tools.track links [--port 5000]    # the dashboard's pages (make mlflow-ui prints them)

The sync itself is the track jobs' (workflow/core/tracking.py): the same code, run by hand.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workflow.core.store import client, dashboard_url, tracking_uri
from workflow.core.tracking import RESULTS, run_sync


def dashboard_links(port: int) -> list[str]:
    """What `make mlflow-ui` prints: the experiments in the model-training view, then each paper's runs. MLflow 3
    opens an experiment on its GenAI overview unless the browser was switched to model training, so the runs page
    of each experiment is named outright."""
    lines = [f"MLflow dashboard: {dashboard_url(port)}"]
    try:
        c = client(retry=True)
        experiments = sorted(c.search_experiments(), key=lambda e: e.name)
    except Exception as exc:  # noqa: BLE001 - the dashboard starts anyway; the links are a convenience
        return lines + [f"(no experiments listed: {type(exc).__name__})"]
    base = dashboard_url(port).split("#")[0]
    return lines + [f"  {e.name:<22} {base}#/experiments/{e.experiment_id}/runs?workflowType=machine_learning"
                    for e in experiments if e.name != "Default"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["sync", "uri", "links"],
                        help="sync: log what MLflow is missing; uri: print the store URI; links: the dashboard's pages")
    parser.add_argument("--port", type=int, default=5000, help="links: the port `make mlflow-ui` serves on")
    parser.add_argument("--paper", action="append", help="sync: only these papers' records (repeatable; default: all)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="sync: the results folder (default: results/)")
    args = parser.parse_args(argv)
    if args.command == "uri":
        print(tracking_uri())
        return 0
    if args.command == "links":
        print("\n".join(dashboard_links(args.port)))
        return 0
    return run_sync(args.paper, args.results, retry=True)


if __name__ == "__main__":
    sys.exit(main())
