# Everything a fresh machine needs: `make demo` runs the main job, `make test` the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test golden clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[torch,test]'
	touch $(STAMP)

demo: setup
	$(VENV)/bin/npudsl transform examples/moe_decoder.py -o out/aclgraph
	$(PY) examples/demo.py

test: setup
	$(PY) -m pytest -q

golden: setup
	$(PY) -m pytest -q tests/golden --update-golden

clean:
	rm -rf $(VENV) out
