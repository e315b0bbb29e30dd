# One command to run svc, one to test it. `make test` works on a fresh Debian/Ubuntu machine as root:
# it installs svc with its test extras, brings the dev clusters (real Slurm 22.05 + loopback sshd, and Slurm 24.11
# in a chroot with its own sshd; docs/clusters.md) and the dev PostgreSQL up, runs the linters and the whole test
# suite against them (store tests run on SQLite and on PostgreSQL), then the Slurm-facing SSH tests on 24.11 too.
#
# Everything runs in a virtualenv of the project's own (.venv), upgraded on every install to the newest versions
# the ranges in pyproject.toml allow: what a new user's `pip install` resolves is what is tested, not whatever the
# machine's Python happened to have. `make test-oldest` holds the ranges' lower bounds in .venv-oldest.
BASE_PYTHON ?= python3
VENV ?= .venv
PYTHON ?= $(VENV)/bin/python
PIP_INSTALL = --quiet --disable-pip-version-check

# The tests that read Slurm's output over SSH (jobs, exit codes, time limits, arrays, accounting and efficiency,
# resources, pending reasons, workflows, sweeps): run again against lab24 (Slurm 24.11) by `make test`. In
# that pass tests/conftest.py points dev_profile at lab24 and deselects the tests marked local_slurm.
SLURM24_TESTS = tests/contract/test_ssh_transport.py tests/integration/test_ssh_transport.py \
	tests/integration/test_ssh_pool.py tests/integration/test_efficiency.py tests/integration/test_pending_reasons.py \
	tests/integration/test_cluster_identity.py tests/integration/test_dev_apps.py tests/integration/test_job_answers_on_the_cluster.py \
	tests/integration/test_sweeps.py tests/integration/test_sweep_arrays.py tests/integration/test_hold_partly_ended_array.py \
	tests/api/test_workflows_api.py tests/security/test_foreign_log_path.py \
	tests/mcp/test_mcp_tools.py::test_ssh_transport_through_a_profile \
	tests/cli/test_cli.py::test_submit_with_a_mount_runs_under_the_mounts_cluster_root tests/integration/test_sessions_end_to_end.py
PYTEST24 = SVC_TEST_SLURM=24.11 $(PYTHON) -m pytest -n 4 --dist loadgroup -m "cluster and not outage and not local_slurm" \
	$(SLURM24_TESTS)

.PHONY: install cluster postgres browser lint jstest test test24 test-oldest stress run

# A PYTHON given on the command line (make test PYTHON=python3) is used as it is; the default one is made here.
install: $(filter $(VENV)/bin/python,$(PYTHON))
	@# --upgrade with the eager strategy: every dependency moves to the newest version its range allows
	$(PYTHON) -m pip install $(PIP_INSTALL) --upgrade --upgrade-strategy eager -e '.[test]'
	@# every separately installable plugin under plugins/, the way its users install it (pytest runs its tests)
	for project in plugins/*/pyproject.toml; do \
		$(PYTHON) -m pip install $(PIP_INSTALL) --upgrade --upgrade-strategy eager -e "$$(dirname "$$project")" || exit 1; \
	done

# A virtualenv needs Debian's python3-venv (ensurepip); a fresh Debian has none, so it is installed when missing.
%/bin/python:
	$(BASE_PYTHON) -m venv $* || { \
		rm -rf $*; command -v apt-get >/dev/null || exit 1; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv && \
		$(BASE_PYTHON) -m venv $*; }
	$@ -m pip install $(PIP_INSTALL) --upgrade pip

cluster:
	bash scripts/devcluster up
	bash scripts/devsshd up
	bash scripts/devcluster up24

postgres:
	bash scripts/devpostgres up

browser:
	bash scripts/browser

# The dashboard's ES modules are checked too: Biome (lint + format, pinned in the dev-only package.json; nothing
# under node_modules is served or installed) and node's own test runner over the pure modules (tests/js).
# `npm ci` runs only when package-lock.json is newer than the last install.
lint: install node_modules/.svc-npm-ci jstest
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy
	node_modules/.bin/biome ci --colors=off svc_host/web/static/js tests/js

node_modules/.svc-npm-ci: package.json package-lock.json
	npm ci --quiet --no-audit --no-fund
	touch $@

jstest:
	node --test tests/js/

# Most cluster tests wait on Slurm (time limits, job ends), so four workers share the two cores well;
# tests marked HOLDS_GPUS (svc_host.testing.plugin) count or hold the GPUs and run one after another.
# Tests marked outage stop a daemon of the 22.05 cluster every other test there needs: they run after the main pass,
# serially. The 24.11 pass needs none of those daemons (it passes with slurmctld, slurmdbd and sshd of 22.05 down),
# so it runs beside them, both mostly waiting on Slurm (about 2 minutes saved); the outage pass's output follows.
OUTAGE_LOG = .outage-pass.log
test: install cluster postgres browser lint
	$(PYTHON) -m pytest -n 4 --dist loadgroup -m "not outage"
	@rm -f $(OUTAGE_LOG); { $(PYTHON) -m pytest -m outage > $(OUTAGE_LOG) 2>&1; echo "exit $$?" >> $(OUTAGE_LOG); } & \
	$(PYTEST24); pass24=$$?; wait; echo "== the outage pass (it ran beside the 24.11 pass) =="; cat $(OUTAGE_LOG); \
	tail -n 1 $(OUTAGE_LOG) | grep -qx "exit 0" && [ $$pass24 -eq 0 ]

# Only the 24.11 pass.
test24: install cluster postgres
	$(PYTEST24)

# The unit and interface suites with a CPU hog on every core, 3 runs in a row (RUNS=n to change it):
# a test that decides on a wall-clock margin fails here first.
stress: install cluster postgres
	PYTHON=$(PYTHON) bash scripts/stress-check $(or $(RUNS),3)

run: install
	PYTHON=$(PYTHON) bash scripts/run $(ARGS)

# The oldest versions the ranges allow: every direct dependency at its lower bound (scripts/oldest-constraints)
# in a virtualenv of its own, then the unit and interface suites and the plugins' tests (the cluster tests are left
# out; the store's run on PostgreSQL too). 10 minutes or more, so not part of `make test`: run it when a range changes.
OLDEST = .venv-oldest
test-oldest: $(OLDEST)/bin/python postgres
	$(BASE_PYTHON) scripts/oldest-constraints > $(OLDEST)/constraints.txt
	$(OLDEST)/bin/python -m pip install $(PIP_INSTALL) -c $(OLDEST)/constraints.txt -e '.[test]'
	for project in plugins/*/pyproject.toml; do \
		$(OLDEST)/bin/python -m pip install $(PIP_INSTALL) -c $(OLDEST)/constraints.txt -e "$$(dirname "$$project")" \
			|| exit 1; \
	done
	$(OLDEST)/bin/python -m pytest -n 4 --dist loadgroup -p no:cacheprovider -m "not cluster and not outage" \
		tests/unit tests/api tests/mcp tests/cli tests/security plugins
