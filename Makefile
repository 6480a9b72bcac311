# Two commands for a newcomer: `make audit` and `make test`. Both create .venv when missing and install once;
# the install is redone only when pyproject.toml changes (the stamp file's name carries its hash).
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
PYPROJECT_HASH := $(shell $(PYTHON) -c "import hashlib;print(hashlib.sha256(open('pyproject.toml','rb').read()).hexdigest()[:16])")
STAMP := $(VENV)/.installed-$(PYPROJECT_HASH)
KERNEL := benchaudit
JOBS ?= 2
# Test processes: a test file stays in one process (its module fixtures run once); 0 runs them all in this one.
TEST_WORKERS ?= 2
# EvalPlus's harness for the harness_exploits audit, without the model clients its metadata pulls (see pyproject).
EVALPLUS := evalplus==0.3.1
# AUDIT_MIRROR (a folder laid out as <dataset>/<file>) is honoured when set; runs stay offline-safe without it.
MIRROR_FLAG := $(if $(AUDIT_MIRROR),--mirror "$(AUDIT_MIRROR)",)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: install audit test regression mutation lab fetch sources clean distclean evalplus-venv

$(VPY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install --quiet --disable-pip-version-check -e '.[dev,dask,harnesses]'
	$(VPY) -m pip install --quiet --disable-pip-version-check --no-deps '$(EVALPLUS)'
	$(VPY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "$(KERNEL)"
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)

audit: install
	@status=0; $(VPY) -m audit_lib run --jobs $(JOBS) $(MIRROR_FLAG) $(ARGS) || status=$$?; \
	echo "Open the reports: $${AUDIT_REPORTS_DIR:-$(CURDIR)/reports}/index.html"; exit $$status

test: install
	$(VPY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# Every audit in full against its golden findings (tests/golden/), HumanEval+ and MBPP+ included (~10 min).
regression: install
	$(VPY) -m pytest -q tests/test_golden.py --regression $(PYTEST_ARGS)

# The test-only venv with upstream evalplus 0.3.1 (build/evalplus-venv) that the upstream comparison tests run.
evalplus-venv:
	bash tools/upstream/make_evalplus_venv.sh

# Mutation testing of the rule modules (tools/mutation.toml); installs mutmut itself; not part of `make test`.
mutation: install
	$(VPY) tools/mutation.py $(MUTATION_ARGS)

lab: install
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG)

fetch: install
	$(VPY) -m audit_lib fetch $(MIRROR_FLAG)

sources: install
	$(VPY) -m audit_lib sources $(MIRROR_FLAG)

clean:
	find reports -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
	rm -rf .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
