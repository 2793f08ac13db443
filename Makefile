# `make demo` shows what npudsl does, `make test` runs the tests; both set up .venv on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
NPUDSL := $(VENV)/bin/npudsl
# torch comes from the PyTorch CPU wheel index (pinned by constraints.txt): never the CUDA build.
# Only torch itself is looked up there (its dependencies come with the next step, from the usual index).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: setup demo test golden clean

$(VENV)/.torch: constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -qq --retries 0 --no-deps -c constraints.txt --index-url $(TORCH_INDEX) torch
	touch $@

$(VENV)/.demo: $(VENV)/.torch pyproject.toml
	$(PIP) install -qq -c constraints.txt -e '.[torch]'
	touch $@

$(VENV)/.test: $(VENV)/.demo
	$(PIP) install -qq -c constraints.txt -e '.[torch,test]'
	touch $@

setup: $(VENV)/.test

demo: $(VENV)/.demo
	@echo "== npudsl transform examples/moe_decoder.py --diff   (what the decorators become on Ascend aclgraph)"
	@$(NPUDSL) transform examples/moe_decoder.py --diff
	@$(NPUDSL) transform examples/moe_decoder.py -o out/aclgraph
	@echo "== npudsl schedule examples/moe_decoder.py -o out/moe_decoder.svg   (also: -o out/moe_decoder.json)"
	@$(NPUDSL) schedule examples/moe_decoder.py -o out/moe_decoder.svg
	@echo "== the same model compiled whole on the CPU, op by op, with the race check"
	@$(PY) examples/demo.py

# Lint and types first (seconds), then the tests. `ruff format --check .` joins them once the tree is formatted.
test: $(VENV)/.test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -q

golden: $(VENV)/.test
	$(PY) -m pytest -q tests/golden --update-golden

clean:
	rm -rf $(VENV) out
