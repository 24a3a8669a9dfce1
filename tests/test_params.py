"""Parameters: validated against the schema before anything runs; errors name the key."""
import copy
import shutil

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


# --- strict loading: every probe below goes through load() (what the Snakefile and every job call) on a copy of
# params.yaml and the profiles in a temporary project root; the last ones go through the real `snakemake -n`.

LR_LINE = "    lr: 0.001        # Adam 1e-3, the TAFAS base-training setting\n"  # cosa.base.lr
BATCH_LINE = "    batch_size: 256\n"  # cosa.base.batch_size, the line after LR_LINE


def edited(old: str, new: str) -> str:
    text = (P.ROOT / "params.yaml").read_text()
    assert text.count(old) == 1, f"params.yaml changed: {old!r} is no longer there once"
    return text.replace(old, new)


def project(tmp_path, params_text: str):
    """A project root with this params.yaml and the real profiles (load() reads nothing else from it)."""
    shutil.copytree(P.ROOT / "profiles", tmp_path / "profiles")
    (tmp_path / "params.yaml").write_text(params_text)
    return tmp_path


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def load_error(tmp_path, params_text: str, profile: str = "smoke") -> str:
    with pytest.raises(P.ParamsError) as err:
        P.load(profile, project(tmp_path, params_text))
    return str(err.value).replace(f"{tmp_path}/", "")  # files outside the project are shown in full


def test_duplicate_key_names_the_key_and_both_lines(tmp_path):
    text = edited(BATCH_LINE, BATCH_LINE + "    lr: 0.01\n")
    msg = load_error(tmp_path, text)
    first, second = line_of(text, LR_LINE), line_of(text, "    lr: 0.01\n")
    assert f"params.yaml, line {second}, column 5: duplicate key 'lr' (first at line {first};" in msg
    assert "\n" not in msg


def test_duplicate_keys_are_fine_in_different_mappings(tmp_path):
    assert P.load("smoke", project(tmp_path, (P.ROOT / "params.yaml").read_text()))["cosa"]["base"]["lr"] > 0


def test_yaml_syntax_error_is_one_line_with_file_line_column_and_what_was_expected(tmp_path):
    text = edited(BATCH_LINE, "    batch_size: [256\n")
    msg = load_error(tmp_path, text)
    line = line_of(text, "    batch_size: [256\n")
    assert msg == (f"params.yaml, line {line + 1}, column 13: did not find expected ',' or ']' "
                   f"(while parsing a flow sequence that starts at line {line}, column 17)")


def test_a_float_is_no_integer(tmp_path):
    msg = load_error(tmp_path, edited(BATCH_LINE, "    batch_size: 2.0\n"))
    assert "invalid parameters in params.yaml" in msg
    assert "cosa.base.batch_size: 2.0 is not of type 'integer'" in msg


@pytest.mark.parametrize("value", [2.0, True])
def test_integer_schema_type_rejects_floats_and_bools(value):
    p = copy.deepcopy(base())
    p["cosa"]["base"]["batch_size"] = value
    with pytest.raises(P.ParamsError, match="cosa.base.batch_size: .* is not of type 'integer'"):
        P.validate(p)


def test_a_bad_value_overridden_by_the_smoke_profile_is_still_an_error(tmp_path):
    # smoke sets cosa.base.epochs: 2, so validating only the merged smoke tree (what the tests run) would hide it
    msg = load_error(tmp_path, edited("    epochs: 20       # base", "    epochs: -3       # base"), "smoke")
    assert "invalid parameters in params.yaml" in msg and "cosa.base.epochs: -3 is less than the minimum of 1" in msg


def test_every_profile_is_validated_whichever_one_runs(tmp_path):
    root = project(tmp_path, (P.ROOT / "params.yaml").read_text())
    P.load("default", root)  # valid: leaves a stamp, which must not hide the new profile below
    (root / "profiles" / "broken").mkdir()
    (root / "profiles" / "broken" / "params.yaml").write_text("cosa:\n  base:\n    batch_size: 0\n")
    with pytest.raises(P.ParamsError) as err:
        P.load("default", root)
    assert "profile 'broken'" in str(err.value) and "cosa.base.batch_size: 0 is less than the minimum" in str(err.value)


def test_a_profile_overriding_an_unknown_key_names_its_file(tmp_path):
    root = project(tmp_path, (P.ROOT / "params.yaml").read_text())
    (root / "profiles" / "smoke" / "params.yaml").write_text("cosa:\n  base:\n    learning_rate: 0.1\n")
    with pytest.raises(P.ParamsError, match=r"profiles/smoke/params.yaml: profile overrides unknown key 'cosa.base.learning_rate'"):
        P.load("default", root)


@pytest.mark.parametrize("text", ["", "# nothing but a comment\n", "{}\n"])
def test_empty_params_yaml_says_so(tmp_path, text):
    assert load_error(tmp_path, text).startswith("params.yaml is empty: ")


def test_validation_is_skipped_once_the_files_passed(tmp_path, monkeypatch):
    root = project(tmp_path, (P.ROOT / "params.yaml").read_text())
    P.load("smoke", root)
    monkeypatch.setattr(P, "validate", lambda *a, **k: pytest.fail("validated again"))
    P.load("smoke", root)  # a no-op `snakemake` start and every job: a stamp lookup, not a second of jsonschema
    P.load("default", root)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return copy_repo(tmp_path_factory.mktemp("params"))


@pytest.mark.parametrize("old, new, expected", [
    (BATCH_LINE, "    batch_size: [256\n", "did not find expected ',' or ']' (while parsing a flow sequence"),
    (BATCH_LINE, BATCH_LINE + "    lr: 0.01\n", "duplicate key 'lr' (first at line"),
    (BATCH_LINE, "    batch_size: 2.0\n", "cosa.base.batch_size: 2.0 is not of type 'integer'"),
], ids=["syntax", "duplicate", "float"])
def test_snakemake_shows_the_short_message_and_runs_nothing(scratch, old, new, expected):
    (scratch / "params.yaml").write_text(edited(old, new))
    try:
        done = run([str(BIN / "snakemake"), "-n", "--profile", "profiles/smoke"], scratch, check=False)
    finally:
        (scratch / "params.yaml").write_text((P.ROOT / "params.yaml").read_text())
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert any(line.startswith("params.yaml, line ") or line.startswith("  cosa.base") for line in out.splitlines())
    assert expected in out
    assert "Traceback" not in out and "yaml/" not in out and "params.py" not in out  # no frames, only the message
    assert "Job stats" not in out and not (scratch / "results").exists()  # no job planned, none ran


# --- hostile values: NaN and infinities, counts and lists past what 2 cores can run, an emptied profile -------

@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_nan_and_infinities_are_refused_where_a_number_is_meant(tmp_path, value):
    msg = load_error(tmp_path, edited(LR_LINE, f"    lr: {value}\n"))
    assert "cosa.base.lr: not a finite number (.nan and .inf are refused" in msg


def test_a_count_past_the_default_bound_is_refused_with_its_reason():
    p = copy.deepcopy(base())
    p["adam_implicit_bias"]["datasets"]["gr"] = 10 ** 9  # died of a MemoryError in the job planner
    with pytest.raises(P.ParamsError, match=r"datasets.gr: 1,000,000,000 is over the bound of 10,000,000 that every count"):
        P.validate(p)


def test_a_list_past_the_default_bound_is_refused_with_its_reason():
    p = copy.deepcopy(base())
    p["cosa"]["datasets"]["co2"]["seeds"] = list(range(100_000))  # built the DAG for minutes with no message
    with pytest.raises(P.ParamsError, match=r"co2.seeds: 100,000 items are over the bound of 256 that every list"):
        P.validate(p)


def test_every_integer_and_list_of_the_schema_has_a_bound():
    def unbounded(node, where=""):
        if isinstance(node, list):
            return [u for i, n in enumerate(node) for u in unbounded(n, f"{where}.{i}")]
        if not isinstance(node, dict):
            return []
        out = [where] if (node.get("type") == "integer" and "maximum" not in node and "exclusiveMaximum" not in node
                          or node.get("type") == "array" and "maxItems" not in node) else []
        return out + [u for k, n in node.items() for u in unbounded(n, f"{where}.{k}")]

    assert unbounded(P.schema()) == []


def test_an_emptied_profile_overlay_is_refused(tmp_path):
    root = project(tmp_path, (P.ROOT / "params.yaml").read_text())
    (root / "profiles" / "smoke" / "params.yaml").write_text("# emptied by mistake\n")
    with pytest.raises(P.ParamsError, match=r"profiles/smoke/params.yaml overrides nothing: the 'smoke' profile would "
                                            r"run the default profile's sizes under its own name"):
        P.load("smoke", root)
    assert P.load("default", project(tmp_path / "d", (P.ROOT / "params.yaml").read_text()))  # {}: params.yaml itself


def test_snakemake_refuses_a_nan_knob_before_any_job(scratch):
    (scratch / "params.yaml").write_text(edited(LR_LINE, "    lr: .nan\n"))
    try:
        done = run([str(BIN / "snakemake"), "-n", "--profile", "profiles/smoke"], scratch, check=False)
    finally:
        (scratch / "params.yaml").write_text((P.ROOT / "params.yaml").read_text())
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "cosa.base.lr: not a finite number" in out and "Job stats" not in out


def test_snakemake_checks_the_plans_size_before_building_the_dag(scratch):
    done = run([str(BIN / "snakemake"), "-n", "--profile", "profiles/smoke", "--config", "max_planned_files=100"],
               scratch, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "files, over the bound of 100 (MAX_PLANNED_FILES" in out and "Job stats" not in out
