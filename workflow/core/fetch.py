"""Fetch one raw data set from the catalog (workflow/catalog.yaml), verifying every checksum on the way.

    python -m workflow.core.fetch vic_elec data/raw/vic_elec.csv

A missing or corrupt source stops the run with a message naming the file and what to do. The raw files are
verified again where they are read: Step.start calls verify_raw() on every data/raw/ path argument of a step.

Every job imports this module when it reads a catalog file, so the zip/gzip/importlib.metadata imports are
inside the functions that fetch: verifying costs a stat when nothing changed (see verify_raw).
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from .io import atomic_path, sha256
from .params import ROOT, read_yaml

READS = ()

CATALOG = ROOT / "workflow" / "catalog.yaml"
CACHE = ROOT / "data" / "cache"
VERIFIED = ROOT / ".cache" / "raw-verified"  # one empty stamp per verified (file, size, mtime, catalog) state


class DataError(RuntimeError):
    pass


def catalog() -> dict:
    return read_yaml(CATALOG)


def _download(entry: dict, target: Path) -> None:
    """Fetch a registry file with the ordinary client (pip, or apt for a Debian package); only the named, pinned
    file is accepted."""
    if "apt" in entry:  # a Debian package: the .deb itself, never installed (`apt-get download` needs no root)
        cmd, client = ["apt-get", "download", entry["apt"]], "apt-get"
    else:
        cmd, client = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                       entry["pip"], "-d", str(target.parent)], "pip"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=target.parent)
    except FileNotFoundError:
        done = subprocess.CompletedProcess(cmd, 127, "", f"{client} is not installed here")
    if done.returncode != 0 or not target.exists():
        raise DataError(f"could not download {entry.get('apt') or entry['pip']} ({target.name}) with {client}:\n"
                        f"{done.stderr.strip()[-800:]}\nFix: check that the package registry is reachable, or copy "
                        f"{target.name} into {target.parent}/ by hand.")


def deb_member(deb: Path, member: str) -> bytes:
    """A file of a Debian package, read from the .deb (an ar archive whose data.tar.* holds the files)."""
    import io
    import tarfile

    with open(deb, "rb") as fh:
        if fh.read(8) != b"!<arch>\n":
            raise DataError(f"{deb} is not a Debian package (no ar header). Fix: delete it and re-run.")
        while len(header := fh.read(60)) == 60:
            name, size = header[:16].decode().strip().rstrip("/"), int(header[48:58])
            body = fh.read(size)
            fh.read(size % 2)  # ar pads members to an even length
            if name.startswith("data.tar"):
                with tarfile.open(fileobj=io.BytesIO(body)) as tar:  # xz, gz or bz2, detected
                    for candidate in (f"./{member}", member):
                        try:
                            return tar.extractfile(candidate).read()
                        except KeyError:
                            continue
                raise KeyError(member)
    raise DataError(f"{deb} has no data.tar member. Fix: delete it and re-run.")


def bundle(files: dict[str, bytes]) -> bytes:
    """Files as one uncompressed zip, byte-identical wherever it is built (sorted names, a fixed date), so that a
    data set of many files (a catalog entry with `members:`, read from a .deb) has one checksum like any other."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(files):
            zf.writestr(zipfile.ZipInfo(Path(name).name, date_time=(1980, 1, 1, 0, 0, 0)), files[name])
    return out.getvalue()


def archive_path(name: str, entry: dict) -> Path:
    """The local file of an archive, fetched and checksum-verified."""
    if "installed" in entry:
        import importlib.metadata

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


def _shown(path: Path) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _stamp(path: Path) -> Path:
    """Where a successful verification of `path` in its present state is remembered.

    Keyed by the file's size and mtime_ns and the catalog's: a truncated, rewritten or re-fetched file, or an
    edited catalog, finds no stamp and is hashed again. (A same-size edit that also restores the mtime slips
    through; that takes intent, not an accident.)"""
    st, cat = path.stat(), CATALOG.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{cat.st_size}|{cat.st_mtime_ns}"
    return VERIFIED / hashlib.sha256(key.encode()).hexdigest()


def _touch(stamp: Path) -> None:
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


def verify_raw(path) -> None:
    """Check data/raw/<name>.csv against its catalog entry (size, then sha256) before a step reads it.

    Checksums at fetch time do not cover a file truncated or edited afterwards, which a reader would take as
    is (cosa's prepare exits 0 on half the data). Hashing 4 MB in every job would add up, so a success is
    remembered (_stamp): an unchanged file costs two stats and an exists()."""
    path = Path(path)
    stamp = _stamp(path)  # stat before hashing: a file changed while it is hashed is not marked as verified
    if stamp.exists():
        return
    shown = _shown(path)
    fix = f"Fix: `rm {shown}` and re-run, or `snakemake -f {shown}` (both fetch it again and verify it)."
    entry = catalog()["datasets"].get(path.stem)
    if entry is None:
        raise DataError(f"{shown} is not a catalog data set: there is no '{path.stem}' in "
                        f"{_shown(CATALOG)}. Fix: read raw data only through catalog entries.")
    size = path.stat().st_size
    if size != entry["bytes"]:
        raise DataError(f"{shown} has {size:,} bytes, the catalog says {entry['bytes']:,}: it is truncated or "
                        f"was changed after the fetch, and no step reads it as is. {fix}")
    digest = sha256(path)
    if digest != entry["sha256"]:
        raise DataError(f"{shown} has sha256 {digest}, the catalog says {entry['sha256']}: it was changed after "
                        f"the fetch, and no step reads it as is. {fix}")
    _keep(path, kept_copy(path.stem), digest)  # a file fetched before copies were kept gets one too (see fetch)
    _touch(stamp)


def check_raw_readable(raw: Path = ROOT / "data" / "raw") -> None:
    """A DataError with one line per file under data/raw/ that this user cannot read, and the fix. Checked before
    the DAG is built: Snakemake reads raw files for their checksums while building it, and an unreadable one
    stopped the run with a 90-line traceback through its internals."""
    lines = []
    for path in sorted(raw.glob("*")) if raw.is_dir() else []:
        try:
            with open(path, "rb"):
                pass
        except IsADirectoryError:
            continue
        except OSError as err:
            shown = _shown(path)
            lines.append(f"{shown}: cannot be read ({err.strerror}). Fix: `chmod u+r {shown}` if it is yours, or "
                         f"`rm {shown}` and re-run to fetch it again (verified against the catalog).")
    if lines:
        raise DataError("\n".join(lines))


def verify_step_inputs(paths) -> None:
    """Step.start's check of its data/raw/ arguments: a bad file ends the job with one paragraph, like fetch."""
    try:
        for path in paths:
            verify_raw(path)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None


def raw_suffix(entry: dict) -> str:
    """A raw file is data/raw/<name>.csv unless its catalog entry names another format (e.g. `suffix: .idx`)."""
    return entry.get("suffix", ".csv")


def kept_copy(name: str) -> Path:
    return CACHE / "verified" / f"{name}{raw_suffix(catalog()['datasets'].get(name, {}))}"


def _keep(path: Path, kept: Path, digest: str) -> None:
    """Make `kept` a copy of the verified file `path` (sha256 `digest`) unless it already is one."""
    if not kept.is_file() or kept.stat().st_size != path.stat().st_size or sha256(kept) != digest:
        with atomic_path(kept) as tmp:
            shutil.copyfile(path, tmp)


def fetch(name: str, out: Path) -> str:
    """Write data set `name` to `out` (atomically); returns its sha256.

    Snakemake deletes a job's outputs before running it, so `snakemake -f data/raw/<name>.csv` with a corrupt
    archive used to lose a good file. Hence every verified extraction is also kept under data/cache/verified/
    (a real copy, not a hard link: an in-place truncation of the raw file would truncate a link too), and when
    the archive cannot be used, the kept copy, verified again, is restored with a warning naming the archive and
    its fix. The job then succeeds: a failed job's outputs are deleted by Snakemake as well.
    """
    cat = catalog()
    if name not in cat["datasets"]:
        raise DataError(f"unknown data set '{name}'; the catalog ({CATALOG.relative_to(ROOT)}) has: "
                        f"{', '.join(sorted(cat['datasets']))}")
    entry, kept = cat["datasets"][name], kept_copy(name)
    if Path(out).suffix != raw_suffix(entry):
        raise DataError(f"data set '{name}' is a {raw_suffix(entry)} file; {out} asks for {Path(out).suffix or 'no suffix'}. "
                        f"Fix: read it as data/raw/{name}{raw_suffix(entry)}.")
    try:
        digest = _extract(name, entry, cat, out)
    except DataError as exc:
        if not kept.is_file() or sha256(kept) != entry["sha256"]:
            raise
        with atomic_path(out) as tmp:
            shutil.copyfile(kept, tmp)
        print(f"warning: {' '.join(str(exc).split())} The archive could not be used, so {_shown(out)} was restored "
              f"from the verified copy {_shown(kept)} (sha256 matches the catalog).", file=sys.stderr)
        digest = entry["sha256"]
    else:
        _keep(out, kept, digest)
    _touch(_stamp(out))  # just hashed: the first step that reads it pays a stat only
    return digest


def _extract(name: str, entry: dict, cat: dict, out: Path) -> str:
    """The data set from its archive, checksum-verified, written to `out`; its sha256."""
    import gzip
    import tarfile
    import zipfile

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
                if "members" in entry:  # a set of files, kept together as one zip (see bundle)
                    tmp.write_bytes(bundle({m: deb_member(arch, m) for m in entry["members"]}))
                else:
                    if arch.suffix == ".deb":
                        data = deb_member(arch, entry["member"])
                    else:
                        with zipfile.ZipFile(arch) as zf:
                            data = zf.read(entry["member"])
                    # a gzipped member is stored decompressed: the catalog checksum is of the file itself
                    tmp.write_bytes(gzip.decompress(data) if entry["member"].endswith(".gz") else data)
            except (KeyError, zipfile.BadZipFile, gzip.BadGzipFile, tarfile.TarError, EOFError, ValueError) as exc:
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
    step.verify_raw = False  # its data/raw/ path is the output it rewrites
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
