"""The tracking server's secrets and checks that need no PostgreSQL: passwords kept private and outside the
repository, one set per cluster folder; a cluster of an older version (trust authentication) refused; the socket's
folder closed to other users. The server itself, on a real PostgreSQL: tests/scale/test_server_security.py."""
from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
import urllib.parse
from pathlib import Path

import pytest

from conftest import ROOT

from workflow.tools import server

# what initdb --auth=trust (the older version of server.py) writes, less its comments
TRUST_HBA = """# TYPE  DATABASE        USER            ADDRESS                 METHOD
local   all             all                                     trust
host    all             all             127.0.0.1/32            trust
"""
SCRAM_HBA = TRUST_HBA.replace("trust", "scram-sha-256") + "# a comment that says trust\n"


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def cluster(folder: Path, hba: str) -> Path:
    """A stand-in for an initdb'd data folder: all these checks read is PG_VERSION and pg_hba.conf."""
    data = folder / "postgres"
    data.mkdir(parents=True)
    (data / "PG_VERSION").write_text("15\n")
    (data / "pg_hba.conf").write_text(hba)
    return data


def test_passwords_are_kept_private_outside_the_repository_one_file_per_cluster_folder(tmp_path, config):
    first = server.new_secrets(tmp_path / "a")
    path = server.secrets_file(tmp_path / "a")
    assert path.parent == config / "iclr2026-repro"
    assert not path.resolve().is_relative_to(ROOT)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert server.load_secrets(tmp_path / "a") == first
    assert first[server.ADMIN] != first[server.ROLE] and min(map(len, first.values())) >= 40

    second = server.new_secrets(tmp_path / "b")  # another --folder: its own passwords, the first's kept
    assert server.secrets_file(tmp_path / "b") != path and set(second.values()).isdisjoint(first.values())
    assert server.load_secrets(tmp_path / "a") == first
    assert server.secrets_file(tmp_path / "x" / ".." / "a") == path  # keyed by the resolved folder


def test_without_xdg_config_home_the_passwords_go_to_the_home_config_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert server.secrets_file(tmp_path / "a").parent == tmp_path / "home" / ".config" / "iclr2026-repro"


def test_a_folder_made_with_loose_permissions_is_closed(tmp_path, config):
    path = server.secrets_file(tmp_path / "a")
    path.parent.mkdir(parents=True, mode=0o755)
    path.parent.chmod(0o755)
    server.new_secrets(tmp_path / "a")
    assert mode(path.parent) == 0o700 and mode(path) == 0o600


def test_a_trust_cluster_of_an_older_version_is_refused_with_the_fix(tmp_path, config):
    data = cluster(tmp_path / "old", TRUST_HBA)
    server.new_secrets(tmp_path / "old")  # even with passwords at hand: trust would still let anyone in
    with pytest.raises(server.ServerError, match="trust authentication") as err:
        server.existing_passwords(tmp_path / "old", data)
    assert f"remove {tmp_path / 'old'}" in str(err.value)


def test_a_password_cluster_without_its_saved_passwords_is_a_clear_error(tmp_path, config):
    data = cluster(tmp_path / "c", SCRAM_HBA)
    with pytest.raises(server.ServerError, match="passwords of the PostgreSQL cluster .* are not in"):
        server.existing_passwords(tmp_path / "c", data)
    saved = server.new_secrets(tmp_path / "c")
    assert server.existing_passwords(tmp_path / "c", data) == saved


def test_the_store_uri_is_the_mlflow_role_with_its_url_encoded_password():
    uri = server.store_uri(5433, "a/b@c:d%e")
    parts = urllib.parse.urlsplit(uri)
    assert (parts.username, parts.hostname, parts.port, parts.path) == ("mlflow", "127.0.0.1", 5433, "/mlflow")
    assert urllib.parse.unquote(parts.password) == "a/b@c:d%e"


def test_the_socket_folder_is_closed_to_other_users():
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("as root the folder goes to user postgres, absent here (apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="mlflow-server-"))  # as root, user postgres cannot enter pytest's tmp_path
    try:
        folder.chmod(0o755)
        server.private_folder(folder)
        assert mode(folder) == 0o700
        assert folder.stat().st_uid == (pwd.getpwnam("postgres").pw_uid if os.geteuid() == 0 else os.geteuid())
    finally:
        shutil.rmtree(folder)


def test_a_socket_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(server.os, "geteuid", lambda: tmp_path.stat().st_uid + 4321)  # not root, not the owner
    with pytest.raises(server.ServerError, match="pass a --folder of your own"):
        server.private_folder(tmp_path)
