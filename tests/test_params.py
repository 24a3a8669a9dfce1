"""Parameters: validated against the schema before anything runs; errors name the key."""
import copy

import pytest

from conftest import BIN, copy_repo, run
from workflow.core import params as P


def base():
    return P.read_yaml(P.ROOT / "params.yaml")


def test_default_and_smoke_profiles_validate():
    assert P.load("default")["cosa"]["tta"]["methods"][0] == "no_tta"
    assert P.load("smoke")["adam_implicit_bias"]["train"]["steps"] < P.load("default")["adam_implicit_bias"]["train"]["steps"]


@pytest.mark.parametrize("mutate, key", [
    (lambda p: p["cosa"]["base"].update(lr=-0.1), "cosa.base.lr"),
    (lambda p: p["cosa"]["base"].update(epochs="ten"), "cosa.base.epochs"),
    (lambda p: p["adam_implicit_bias"]["train"].update(stepz=5), "adam_implicit_bias.train.stepz"),
    (lambda p: p["cosa"]["datasets"]["co2"].update(bases=["transformer"]), "cosa.datasets.co2.bases.0"),
])
def test_schema_names_the_bad_key(mutate, key):
    p = copy.deepcopy(base())
    mutate(p)
    with pytest.raises(P.ParamsError) as err:
        P.validate(p)
    assert key in str(err.value)


def test_overlay_rejects_unknown_keys():
    with pytest.raises(P.ParamsError, match="cosa.tta.learning_rate"):
        P.overlay(base(), {"cosa": {"tta": {"learning_rate": 0.1}}})


def test_unknown_profile_is_named():
    with pytest.raises(P.ParamsError, match="unknown profile 'nope'"):
        P.load("nope")


def test_snakemake_rejects_a_bad_parameter_before_any_job(tmp_path):
    repo = copy_repo(tmp_path)
    (repo / "profiles" / "broken").mkdir()
    (repo / "profiles" / "broken" / "params.yaml").write_text("cosa:\n  base:\n    lr: -1\n")
    done = run([str(BIN / "snakemake"), "--cores", "1", "--config", "profile=broken"], repo, check=False)
    assert done.returncode != 0
    assert "cosa.base.lr" in done.stdout + done.stderr
    assert not (repo / "results").exists()  # nothing ran
