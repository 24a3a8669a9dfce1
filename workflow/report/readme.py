"""Put the verdict table of the last default-profile report into README.md (`make readme`).

The table lives between two marker lines of the README; everything else is left as written.
"""
from __future__ import annotations

import sys
from pathlib import Path

from workflow.core.params import ROOT

START, END = "<!-- verdicts:start (make readme) -->", "<!-- verdicts:end -->"


def splice(readme: str, table: str) -> str:
    if START not in readme or END not in readme:
        raise SystemExit(f"README.md lacks the marker lines {START!r} and {END!r} around the verdict table")
    head, rest = readme.split(START, 1)
    return head + START + "\n" + table + rest[rest.index(END):]


def main(argv=None) -> None:
    table_path = ROOT / "results" / "report" / "verdicts.md"
    if not table_path.exists():
        raise SystemExit(f"{table_path.relative_to(ROOT)} is missing: run `make reproduce` (default profile) first")
    table = table_path.read_text()
    if "from the default profile" not in table.splitlines()[0]:
        raise SystemExit(f"{table_path.relative_to(ROOT)} comes from another profile: the README shows the default "
                         "profile's verdicts; run `make reproduce` first")
    readme = ROOT / "README.md"
    readme.write_text(splice(readme.read_text(), table))
    print(f"README.md: verdict table updated from {table_path.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
