# cosim: set-up and entry points. Every target installs what is missing on a fresh Debian machine.
PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBS    := libsundials-dev libsuitesparse-dev liblapack-dev libblas-dev
STAMP   := $(VENV)/.installed

.PHONY: demo test bench asan deps venv build clean valgrind notebook

demo: build
	$(VPY) -m cosim demo

test: build
	$(VPY) -m pytest tests

# Open the teaching notebooks in JupyterLab (installs the [jupyter] extra into .venv on first use).
notebook: build
	@$(VPY) -c "import jupyterlab" 2>/dev/null || $(VPY) -m pip install -q --no-build-isolation -e '.[jupyter]'
	$(VENV)/bin/jupyter lab notebooks/

bench: build
	@for b in benchmarks/*.py; do echo "== $$b"; $(VPY) $$b || exit 1; done

# Debian packages: SUNDIALS CVODE and LAPACK/BLAS headers and libraries.
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi

$(STAMP): pyproject.toml | deps
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip setuptools wheel numpy
	$(VPY) -m pip install -q --no-build-isolation -e '.[test]'
	touch $(STAMP)

venv: deps $(STAMP)

build: venv
	$(VPY) setup.py -q build_ext --inplace

# AddressSanitizer + UBSan build of the C core, then the test suite under it.
asan: venv
	COSIM_SANITIZE=1 $(VPY) setup.py -q build_ext --inplace --force
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  $(VPY) -m pytest tests -x -q -p no:cacheprovider -k "not notebook"
	$(VPY) setup.py -q build_ext --inplace --force

valgrind: build
	.ci/valgrind.sh .venv/bin/python

clean:
	rm -rf build cosim/*.so out
