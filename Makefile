# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# SiliconBench's own modules compiled to bytecode before they run: where PYTHONDONTWRITEBYTECODE
# is set (as on the machine this project is built on) nothing else writes it, and every process
# (each run's worker, each test's) compiled them anew, 0.05-0.15 CPU-s each. Only changed files
# are compiled again.
COMPILE := $(BIN)/python -m compileall -q siliconbench

.PHONY: run test test-llamacpp devices bench app clean screenshots

# Installs once; again only when pyproject.toml changes, so a second call is quick.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "SiliconBench needs Python 3.11 or newer; set PYTHON=python3.12 (for example).")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	@$(COMPILE)
	$(BIN)/siliconbench

# ruff first (a second), then the suite. The 15 slowest tests are listed after every run, so a
# slow new test shows at once. Tests run in parallel workers (pytest-xdist), at most 4: each
# starts framework processes of its own.
# A costly run that several tests assert on is made once for all workers
# (tests/helpers/cli_processes.shared); one that mostly waits starts with the session
# (EARLY in tests/conftest.py).
test: $(STAMP)
	$(BIN)/ruff check .
	@$(COMPILE) tests
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n auto --maxprocesses=4 --durations=15 \
		$(addprefix --ignore=,$(LLAMACPP_TESTS))

# llama.cpp's tests, apart: PyPI has llama-cpp-python's source only, so installing the extra
# compiles llama.cpp (about 20 minutes on 2 cores; a Mac needs the Xcode command-line tools and
# cmake). pip keeps the wheel it built in its cache, so a machine compiles it once. `make test`
# leaves these modules to this step (where llama.cpp is installed they would otherwise run
# twice). CI runs both. Every test module that needs llama-cpp-python is listed here
# (tests/test_suite_shape.py checks it). The multimodal library (LLAVA_BUILD) is left out:
# nothing here uses it. CMAKE_ARGS from the environment wins.
LLAMACPP_TESTS := tests/frameworks/test_llamacpp.py tests/frameworks/test_llamacpp_cache.py \
	tests/frameworks/test_llamacpp_plan.py tests/frameworks/test_serve_llamacpp.py
LLAMACPP_STAMP := $(VENV)/.installed-llamacpp
$(LLAMACPP_STAMP): $(STAMP)
	CMAKE_ARGS="$${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" $(BIN)/python -m pip install -q -e '.[dev,llamacpp]'
	touch $(LLAMACPP_STAMP)

test-llamacpp: $(LLAMACPP_STAMP)
	@$(COMPILE) tests
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(LLAMACPP_TESTS)

devices: $(STAMP)
	@$(COMPILE)
	$(BIN)/siliconbench devices

bench: $(STAMP)
	@$(COMPILE)
	$(BIN)/python benchmarks/gemm_fidelity.py
	$(BIN)/python benchmarks/cli_speed.py
	$(BIN)/python benchmarks/gui_startup.py

# docs/screenshots/: the real window after the quick suite, one PNG per tab (a few minutes).
screenshots: $(STAMP)
	@$(COMPILE)
	$(BIN)/python scripts/screenshots.py

# The Mac app, dist/SiliconBench.app (arm64): py2app bundles this venv's Python and torch.
app:
	@test "$$(uname -s)-$$(uname -m)" = Darwin-arm64 || { echo "make app builds the Mac app and needs a Mac with Apple Silicon; elsewhere use make run."; exit 2; }
	$(MAKE) $(STAMP)
	$(BIN)/python -m pip install -q -e '.[app]'
	rm -rf build dist/SiliconBench.app
	$(BIN)/python setup_app.py py2app
	@echo "Built dist/SiliconBench.app; drag it to Applications."

clean:
	rm -rf $(VENV) build dist *.egg-info
