"""The project's maintenance commands (workflow/tools/) and what they keep in step: the conda environment file is the
lock, and the workflow lints clean (every rule declares that environment and names nothing from outside itself)."""
import re
import subprocess
import sys

import yaml

from conftest import ROOT, env
from workflow.tools import condaenv


def lock_pins() -> set[str]:
    """requirements.lock's packages as name==version, read here without the generator's code."""
    text = (ROOT / "requirements.lock").read_text()
    return {line.split()[0] for line in text.splitlines() if re.match(r"[A-Za-z0-9]", line)}


def test_the_conda_environment_lists_exactly_the_locks_packages():
    spec = yaml.safe_load((ROOT / "workflow/envs/repro.yaml").read_text())
    deps = spec["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert f"python={condaenv.PYTHON}" in deps and "pip" in deps
    assert sys.version.startswith(condaenv.PYTHON + ".")  # the Python the lock was resolved and tested for
    pins = [d for d in pip if not d.startswith("--")]
    assert len(pins) == len(set(pins)) and set(pins) == lock_pins()
    assert "torch==2.13.0+cpu" in pins  # the CPU build: hence PyTorch's own index
    assert f"--extra-index-url {condaenv.EXTRA_INDEX}" in pip


def test_the_conda_environment_file_is_generated_from_the_lock():
    assert condaenv.main(["--check"]) == 0, "run `python -m workflow.tools.condaenv` and commit the file"


def test_an_unreadable_lock_line_is_an_error():
    import pytest

    assert condaenv.pins("a==1 \\\n    --hash=sha256:00\n# c\nb==2.0 ; python_version < '3.12'\n") == [
        "a==1", "b==2.0 ; python_version < '3.12'"]
    with pytest.raises(ValueError, match="cannot read"):
        condaenv.pins("a>=1\n")


def test_the_workflow_lints_clean():
    done = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--cores", "1"], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Lints for" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-4000:]
