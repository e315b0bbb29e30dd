# One command to run svc, one to test it. `make test` works on a fresh Debian/Ubuntu machine as root:
# it installs svc with its test extras, brings the dev cluster (real Slurm + loopback sshd) and the dev PostgreSQL
# up, runs the linters and the whole test suite against them (store tests run on SQLite and on PostgreSQL).
PYTHON ?= python3

.PHONY: install cluster postgres browser lint test stress run

install:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@# every separately installable plugin under plugins/, the way its users install it (pytest runs its tests)
	for project in plugins/*/pyproject.toml; do \
		$(PYTHON) -m pip install --quiet --disable-pip-version-check -e "$$(dirname "$$project")" || exit 1; \
	done

cluster:
	bash scripts/devcluster up

postgres:
	bash scripts/devpostgres up

browser:
	bash scripts/browser

lint:
	ruff check .
	mypy

# Most cluster tests wait on Slurm (time limits, job ends), so four workers share the two cores well;
# tests marked HOLDS_GPUS (svc_host.testing.plugin) count or hold the GPUs and run one after another.
# Tests marked outage stop a daemon every other test needs: they run afterwards, alone and serially.
test: install cluster postgres browser lint
	$(PYTHON) -m pytest -n 4 --dist loadgroup -m "not outage"
	$(PYTHON) -m pytest -m outage

# The unit and interface suites with a CPU hog on every core, 3 runs in a row (RUNS=n to change it):
# a test that decides on a wall-clock margin fails here first.
stress: install cluster postgres
	PYTHON=$(PYTHON) bash scripts/stress-check $(or $(RUNS),3)

run: install
	bash scripts/run $(ARGS)
