# Two commands do all the set-up on a fresh machine:
#   make reproduce   every paper, default profile, then the report (results/report/index.html)
#   make test        the test suite (unit tests + an end-to-end smoke run through snakemake and dvc)
# make test-scale runs the same DAG beyond one machine (SLURM, an MLflow server, an S3 remote); as root.
# Everything runs inside .venv, created from requirements.txt on first use.

VENV    := .venv
PY      := $(VENV)/bin/python
export PATH := $(abspath $(VENV))/bin:$(PATH)
export MLFLOW_DISABLE_TELEMETRY := true
CORES   ?= 2
PROFILE ?= default
PORT    ?= 5000
SERVER_PORT ?= 5001

.PHONY: lock setup scale-setup reproduce smoke test browser test-scale resources readme mlflow-ui mlflow-server track-sync \
        dvc.yaml dvc-check clean

setup: $(VENV)/.installed

# requirements.lock pins every package, transitive ones included, with hashes: the environment the tests passed in.
$(VENV)/.installed: requirements.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements.lock
	dvc config core.analytics false
	touch $@

reproduce: setup  ## all papers, $(PROFILE) profile; a default run is then recorded in dvc.lock (see README)
	snakemake --cores $(CORES) $(if $(filter-out default,$(PROFILE)),--profile profiles/$(PROFILE))
	$(if $(filter default,$(PROFILE)),dvc repro --quiet dag_shape && dvc commit --force --no-relink --quiet)
	@echo "Report: results/report/index.html   Dashboard: make mlflow-ui"

smoke: setup
	$(MAKE) reproduce PROFILE=smoke

# Re-resolve requirements.lock from requirements.txt (an upgrade: then `make test` and commit both files), and the
# conda environment file every rule declares (workflow/envs/repro.yaml) from it.
# WHEELS: a folder of local wheels, where the pinned CPU build of torch lies on these machines.
WHEELS ?= /opt/wheels
COMPILE = $(VENV)/bin/uv pip compile --generate-hashes --no-header --no-annotate --python-version 3.11 \
	--python-platform x86_64-manylinux_2_28 $(if $(wildcard $(WHEELS)),--find-links $(WHEELS)) $(LOCK_FLAGS)
lock: setup
	$(PY) -m pip install --quiet --disable-pip-version-check uv==0.13.9
	{ printf '# requirements.lock: every package of the environment, transitive ones included, pinned with hashes.\n'; \
	  printf '# Installed by `make setup`; refreshed from requirements.txt by `make lock` (then `make test`, commit both).\n'; \
	  $(COMPILE) requirements.txt; } > requirements.lock.new && mv requirements.lock.new requirements.lock
	{ printf '# requirements-scale.lock: what `make test-scale` adds (SLURM executor, PostgreSQL driver, dvc-s3, moto),\n'; \
	  printf '# resolved against requirements.lock (nothing there is upgraded). Refreshed by `make lock`.\n'; \
	  $(COMPILE) -c requirements.lock requirements-scale.txt; } > requirements-scale.lock.new && mv requirements-scale.lock.new requirements-scale.lock
	$(PY) -m workflow.tools.condaenv

test: setup browser  ## no root needed; the scale tests are `make test-scale`
	$(PY) -m pytest -q tests --ignore=tests/scale

# Debian's Chromium, for the test that opens the report in a real browser. Installed when run as root (CI); a failed
# or impossible install is a note, not an error: that one test is then skipped and says how to install it.
browser:
	@command -v chromium >/dev/null || { test "$$(id -u)" = 0 && { export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && \
	  apt-get install -y -q chromium >/dev/null 2>&1; }; }; \
	  command -v chromium >/dev/null || echo "note: Chromium is not installed (apt-get install chromium, as root):" \
	    "the report's browser test will be skipped"; }

# What running beyond one machine needs in .venv (SLURM executor plugin, PostgreSQL driver, dvc-s3; moto for tests).
scale-setup: $(VENV)/.installed-scale
$(VENV)/.installed-scale: requirements-scale.lock $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements-scale.lock
	touch $@

test-scale: scale-setup  ## a real single-node SLURM cluster, MLflow on PostgreSQL, a DVC S3 remote (moto)
	{ command -v slurmctld && ls /usr/lib/postgresql/*/bin/initdb; } >/dev/null 2>&1 || { test "$$(id -u)" = 0 || \
	  { echo "error: SLURM or PostgreSQL is not installed; run make test-scale as root (it runs apt-get install \
	  slurm-wlm munge postgresql)" >&2; exit 1; }; \
	  export DEBIAN_FRONTEND=noninteractive; apt-get install -y -q slurm-wlm munge postgresql >/dev/null || \
	  { apt-get update -q && apt-get install -y -q slurm-wlm munge postgresql >/dev/null; }; }
	$(PY) -m pytest -q tests/scale

resources: setup  ## refresh workflow/resources.yaml from the benchmark files of the last run (a default run)
	$(PY) -m workflow.tools.resources

readme: setup  ## write the README's run line, verdict table and claim lines from the last default run's results/
	$(PY) -m workflow.report.readme

# Prints the experiments' page in MLflow 3's model-training view (its start page is the GenAI one) and each paper's
# runs page (an experiment opens on a GenAI overview until the browser is switched to "Model training" once).
mlflow-ui: setup  ## the MLflow dashboard on this project's database, bound to 127.0.0.1 only
	@$(PY) -m workflow.tools.track links --port $(PORT)
	mlflow ui --backend-store-uri "$$($(PY) -m workflow.tools.track uri)" --host 127.0.0.1 --port $(PORT) --workers 1

mlflow-server: scale-setup  ## MLflow on PostgreSQL at 127.0.0.1:$(SERVER_PORT); then export MLFLOW_TRACKING_URI
	$(PY) -m workflow.tools.server --port $(SERVER_PORT)

track-sync: setup  ## log to MLflow every run record it is missing (after a tracking outage)
	$(PY) -m workflow.tools.track sync

dvc.yaml: setup  ## regenerate dvc.yaml from the Snakemake DAG (commit the result)
	$(PY) -m workflow.tools.dvcgen

dvc-check: setup
	$(PY) -m workflow.tools.dvcgen --check

clean:  ## remove everything a run produced (keeps the data cache)
	rm -rf results .snakemake mlflow.db mlflow.db.lock mlartifacts dvc.lock
