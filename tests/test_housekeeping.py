"""What a run does for itself: a stale lock goes, a live run's lock and writes stay (workflow/core/housekeeping.py)."""
import subprocess
import sys
import time

from conftest import ROOT

from workflow.core import housekeeping
from workflow.core.io import this_host

# A writer inside io.atomic_path: it writes its temporary file, says so, and waits for a line before renaming.
WRITER = ("import sys; from workflow.core.io import atomic_path\n"
          "with atomic_path(sys.argv[1]) as tmp:\n"
          "    tmp.write_text('done'); print(tmp, flush=True); sys.stdin.readline()\n")


def fake_snakemake(folder):
    """A process that looks like a snakemake run working in `folder` (argv[0] 'snakemake', cwd there)."""
    return subprocess.Popen(["bash", "-c", "exec -a snakemake sleep 60"], cwd=folder)


def test_a_run_starting_beside_a_live_one_leaves_its_writes_alone(tmp_path):
    out = tmp_path / "results" / "paper_a" / "model.pt"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(out)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        tmp = writer.stdout.readline().strip()
        assert tmp.endswith(f"-pid{writer.pid}.tmp.pt") and this_host() in tmp
        housekeeping.remove_partial_writes(tmp_path)  # a second run, on another paper, starts here
        writer.stdin.write("\n")
        writer.stdin.flush()
        assert writer.wait(timeout=30) == 0  # its rename found its file
    finally:
        writer.kill()
    assert out.read_text() == "done" and not list(tmp_path.rglob(".*.tmp*"))


def test_partial_writes_of_a_writer_that_is_gone_are_removed(tmp_path):
    folder = tmp_path / "results" / "p"
    folder.mkdir(parents=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = folder / f".model.pt.abc12345.{this_host()}-pid{gone.pid}.tmp.pt"
    old = folder / ".model.pt.abc12345.tmp.pt"  # a name written before names said who wrote them
    elsewhere = folder / ".claims.json.abc12345.node7-pid1.tmp.json"  # a cluster node's job
    for path in (dead, old, elsewhere):
        path.write_text("half")
    line = housekeeping.remove_partial_writes(tmp_path)
    assert line.startswith("Removed 3 temporary file(s)") and not list(folder.iterdir())

    for path in (old, elsewhere):  # while another snakemake works here, only files whose writer is known gone go
        path.write_text("half")
    other = fake_snakemake(tmp_path)
    try:
        time.sleep(0.2)
        assert housekeeping.other_snakemake_here(tmp_path) == [other.pid]
        assert housekeeping.remove_partial_writes(tmp_path) == "" and old.exists() and elsewhere.exists()
    finally:
        other.kill()
        other.wait()


def test_a_stale_lock_goes_and_a_live_runs_lock_stays_with_its_pid_named(tmp_path):
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text("results/x\n")
    other = fake_snakemake(tmp_path)
    try:
        time.sleep(0.2)
        line = housekeeping.clear_stale_lock(tmp_path)
        assert f"(pid {other.pid})" in line and "do not `--unlock`" in line and (locks / "0.output.lock").exists()
    finally:
        other.kill()
        other.wait()
    assert housekeeping.clear_stale_lock(tmp_path).startswith("Removed a stale lock") and not any(locks.iterdir())


def test_every_rule_that_runs_a_command_declares_the_environment_and_its_own_name():
    from types import SimpleNamespace as Rule

    shell = Rule(name="cosa_tta", shellcmd="bin/python -m workflow.run x --rule {rule} --log {log.out:q}", conda_env=None)
    target = Rule(name="cosa", shellcmd=None, conda_env=None)  # a target rule runs nothing
    housekeeping.declare_software([shell, target], "/repo/workflow/envs/repro.yaml")
    assert shell.conda_env == "/repo/workflow/envs/repro.yaml" and target.conda_env is None
    assert shell.shellcmd == "bin/python -m workflow.run x --rule cosa_tta --log {log.out:q}"
