# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test devices bench clean

# Installs once; again only when pyproject.toml changes, so a second call is quick.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "SiliconBench needs Python 3.11 or newer; set PYTHON=python3.12 (for example).")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/siliconbench

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

devices: $(STAMP)
	$(BIN)/siliconbench devices

bench: $(STAMP)
	$(BIN)/python benchmarks/gemm_fidelity.py
	$(BIN)/python benchmarks/cli_speed.py

clean:
	rm -rf $(VENV) build dist *.egg-info
