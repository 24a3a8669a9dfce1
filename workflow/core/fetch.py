"""Fetch one raw data set from the catalog (workflow/catalog.yaml), verifying every checksum on the way.

    python -m workflow.core.fetch vic_elec data/raw/vic_elec.csv

A missing or corrupt source stops the run with a message naming the file and what to do.
"""
from __future__ import annotations

import gzip
import importlib.metadata
import subprocess
import sys
import zipfile
from pathlib import Path

from .io import atomic_path, sha256
from .params import ROOT, read_yaml

CATALOG = ROOT / "workflow" / "catalog.yaml"
CACHE = ROOT / "data" / "cache"


class DataError(RuntimeError):
    pass


def catalog() -> dict:
    return read_yaml(CATALOG)


def _download(entry: dict, target: Path) -> None:
    """Fetch a registry file with the ordinary client; only the named, pinned file is accepted."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
           entry["pip"], "-d", str(target.parent)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or not target.exists():
        raise DataError(f"could not download {entry['pip']} ({target.name}) with pip:\n{done.stderr.strip()[-800:]}\n"
                        f"Fix: check that the package registry is reachable, or copy {target.name} into {target.parent}/ by hand.")


def archive_path(name: str, entry: dict) -> Path:
    """The local file of an archive, fetched and checksum-verified."""
    if "installed" in entry:
        package, version = entry["installed"].split("==")
        try:
            found = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            raise DataError(f"archive '{name}' is the installed package {package}, which is missing. "
                            "Fix: `make setup` (pip install -r requirements.txt).") from None
        if found != version:
            raise DataError(f"archive '{name}' needs {package}=={version} but {found} is installed. "
                            "Fix: `make setup`, or update the catalog entry and its checksums deliberately.")
        return Path(importlib.metadata.distribution(package).locate_file(""))
    path = CACHE / entry["file"]
    if not path.exists():
        _download(entry, path)
    digest = sha256(path)
    if digest != entry["sha256"]:
        raise DataError(f"archive '{name}': {path} is corrupt or a different release (sha256 {digest}, "
                        f"catalog says {entry['sha256']}). Fix: delete {path} and re-run to fetch it again.")
    return path


def fetch(name: str, out: Path) -> str:
    """Write data set `name` to `out` (atomically); returns its sha256."""
    cat = catalog()
    if name not in cat["datasets"]:
        raise DataError(f"unknown data set '{name}'; the catalog ({CATALOG.relative_to(ROOT)}) has: "
                        f"{', '.join(sorted(cat['datasets']))}")
    entry = cat["datasets"][name]
    arch = archive_path(entry["archive"], cat["archives"][entry["archive"]])
    with atomic_path(out) as tmp:
        if arch.is_dir():  # an installed package: the member is a file under site-packages
            source = arch / entry["member"]
            if not source.exists():
                raise DataError(f"data set '{name}': {source} is missing from the installed package. "
                                "Fix: reinstall it (`make setup`).")
            tmp.write_bytes(source.read_bytes())
        else:
            try:
                with zipfile.ZipFile(arch) as zf:
                    data = zf.read(entry["member"])
                # a gzipped member is stored decompressed: the catalog checksum is of the CSV itself
                tmp.write_bytes(gzip.decompress(data) if entry["member"].endswith(".gz") else data)
            except (KeyError, zipfile.BadZipFile, gzip.BadGzipFile) as exc:
                raise DataError(f"data set '{name}': cannot read {entry['member']} from {arch} ({exc}). "
                                f"Fix: delete {arch} and re-run.") from None
        digest = sha256(tmp)
        if digest != entry["sha256"]:
            raise DataError(f"data set '{name}' ({entry['member']}) has sha256 {digest}, the catalog says "
                            f"{entry['sha256']}: the source changed or is corrupt. Nothing was written to {out}. "
                            "Fix: delete the cached archive and re-run; if the upstream file changed on purpose, "
                            "update the catalog checksum and say so in the commit.")
    return digest


def main(argv=None) -> int:
    from .step import Step

    step = Step("data", "fetch", __doc__)
    step.parser.add_argument("name", help="data set name in workflow/catalog.yaml")
    step.parser.add_argument("out", type=Path, help="where to write the verified file")
    args, _ = step.start(argv)
    try:
        digest = fetch(args.name, args.out)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    step.log(f"{args.name}: {args.out} sha256={digest}")
    step.finish(metrics={"bytes": args.out.stat().st_size}, outputs=[args.out])
    return 0


if __name__ == "__main__":
    sys.exit(main())
