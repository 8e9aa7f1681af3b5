# Every target creates/uses .venv, so `make test` and `make demo` work alone on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test soak demo bench eval eval-signals lint agent-clis clean

# Editable: a plain path entry to this folder in a .pth file (pyproject.toml's package-dir says
# why), rebuilt whenever pyproject.toml changes: a venv built with the old finder is replaced.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

install: $(STAMP)

# The tests' temporary files in RAM when /dev/shm has 4 GiB free (TEST_TMPDIR= keeps them on
# disk): the tests create, fsync and delete agents' repositories and databases (the sync tests
# alone ~45,000 files), and on a journalled disk that cost the sync tests ~10 % more CPU
# (test_sync_held_up: 15.6 s -> 13.8 s of user+sys) and a third more wall time. Only a failed
# test's folder is kept, so a run leaves nothing in RAM. Not where /dev/shm is mounted noexec: the
# tests run the scripts they write (hooks, fake CLIs, launchers).
TEST_TMPDIR ?= $(shell awk '$$2 == "/dev/shm" && $$4 !~ /(^|,)noexec(,|$$)/ {ok = 1} END {exit !ok}' /proc/mounts 2>/dev/null \
	&& df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 >= 4194304 {print "/dev/shm"}')

# pytest rewrites each test module's asserts and caches the result in __pycache__/; in a fresh
# clone there is none, and each of the four workers, collecting every file, rewrote all of them
# itself: ~9 s of CPU a worker (cold collection 11.4 s, warm 2.3 s), ~20 s of the suite's wall
# time on two cores. So the test files without a rewritten module yet (`make lint` writes one:
# test_layers.py) are collected first by two processes, half the files each, one a core.
TEST_FILES := $(sort $(wildcard tests/test_*.py tests/*/test_*.py tests/*/*/test_*.py))
UNREWRITTEN = $(foreach file,$(TEST_FILES),$(if $(wildcard \
	$(dir $(file))__pycache__/$(basename $(notdir $(file))).*-pytest-*.pyc),,$(file)))
REWRITE_HALF = printf '%s\n' $(1) | awk 'NR % 2 == $(2)' | xargs -r $(BIN)/python -m pytest -q --collect-only >/dev/null

# The files start longest first (tests/conftest.py orders them by their tests' expected time) and
# xdist keeps that order: its own, the files of most tests first, left the few long ones to the end.
test: $(STAMP)  ## four workers, a file each: most tests wait on git and subprocesses, not the CPU
	@$(if $(UNREWRITTEN),echo "make test: the asserts of $(words $(UNREWRITTEN)) test files rewritten once before the workers start"; \
		($(call REWRITE_HALF,$(UNREWRITTEN),0)) & $(call REWRITE_HALF,$(UNREWRITTEN),1); wait)
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR) )$(BIN)/python -m pytest -q -n 4 --dist loadfile --no-loadscope-reorder \
		$(if $(TEST_TMPDIR),-o tmp_path_retention_policy=failed)

soak: $(STAMP)  ## SOAK_CYCLES=N for a shorter run
	$(BIN)/python -m pytest -q -s -m soak

demo: $(STAMP)  ## KEEP=1 keeps the demo's home; EVOLVE_HOME=DIR (new or empty) is used instead
	$(BIN)/python -P -m evolve.demo $(if $(KEEP),--keep)

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

eval: $(STAMP)  ## replay tests/corpus through the reflection path; EVOLVE_EVAL_LIVE=1: the real model
	$(BIN)/python -m tests.corpus.eval

eval-signals: $(STAMP)  ## how well corrections and preferences are heard, on real labelled messages
	$(BIN)/python -m tests.hearing.eval

agent-clis: $(STAMP)  ## install the pinned agent CLIs the conformance tests drive (.cache/agent-clis/)
	$(BIN)/python tests/agent_clis.py

lint: $(STAMP)  ## ruff, mypy and the layer contract (tests/test_layers.py)
	$(BIN)/ruff check evolve tests benchmarks examples
	$(BIN)/ruff format --check evolve tests benchmarks examples
	$(BIN)/mypy evolve
	$(BIN)/python -m pytest -q tests/test_layers.py

clean:
	rm -rf $(VENV) build dist *.egg-info
