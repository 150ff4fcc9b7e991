# cosim: set-up and entry points. Every target installs what is missing on a fresh Debian machine.
PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBS    := libsundials-dev libsuitesparse-dev liblapack-dev libblas-dev
STAMP   := $(VENV)/.installed

.PHONY: mpi-deps demo test bench asan fuzz fuzz-asan deps venv build clean valgrind notebook wheel wheel-check browser-deps docs docs-check

demo: build
	$(VPY) -m cosim demo

test: mpi-deps build
	$(VPY) -m pytest tests

# Open the teaching notebooks in JupyterLab (installs the [jupyter] extra into .venv on first use).
notebook: build
	@$(VPY) -c "import jupyterlab" 2>/dev/null || $(VPY) -m pip install -q --no-build-isolation -e '.[jupyter]'
	$(VENV)/bin/jupyter lab notebooks/

bench: build
	@$(VPY) -c "import libcosimpy" 2>/dev/null || $(VPY) -m pip install -q --no-build-isolation -e '.[bench]' \
	  || echo "libcosimpy not installable here: benchmarks/energy.py skips the libcosim comparison"
	@for b in benchmarks/*.py; do echo "== $$b"; $(VPY) $$b || exit 1; done

# The documentation site: docs/_build/html (installs the [docs] extra into .venv on first use). Warnings are errors;
# intersphinx works offline (docs/_ext/offline_inventories.py). COSIM_DOCS_GALLERY=none skips running the examples.
docs: build
	@$(VPY) -c "import sphinx, pydata_sphinx_theme, numpydoc, myst_parser, sphinx_gallery, importlib; \
	  importlib.import_module('sphinx-mathjax-offline')" 2>/dev/null || \
	  $(VPY) -m pip install -q --no-build-isolation -e '.[docs]'
	rm -rf docs/_build docs/generated docs/auto_examples
	$(VPY) -m sphinx -W --keep-going -b html -q docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

# The built site in headless Chromium: broken links or images, console errors, empty pages; screenshots in
# out/screenshots/ (tests/browser/test_docs_site.py).
docs-check: docs browser-deps
	$(VPY) -m pytest tests/browser/test_docs_site.py -m browser -p no:cacheprovider

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

# MPI for units distributed over processes (cosim.MPI, tests/test_mpi.py): Debian's Open MPI, and mpi4py built from
# source against it (a wheel may carry another MPI than the one cosim._mpi links); `build` then compiles cosim._mpi.
mpi-deps: venv
	@command -v mpiexec >/dev/null && dpkg -s libopenmpi-dev >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq libopenmpi-dev openmpi-bin; }
	@$(VPY) -c "import mpi4py" 2>/dev/null || $(VPY) -m pip install -q --no-binary mpi4py "mpi4py>=3.1"

# Headless Chromium for the browser checks (tests/browser/): Debian's chromium and its WebDriver.
browser-deps:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver; }

# cosim.explore as a person uses it: Voila, then JupyterLab, serve tests/browser/explore.ipynb on a free localhost port, headless
# Chromium moves the H slider; the figure must change and the console stay free of errors (screenshots: out/screenshots).
BROWSER_TESTS ?= tests/browser/test_explore_browser.py tests/browser/test_explore_jupyterlab.py
.PHONY: browser-test
browser-test: build browser-deps
	$(VPY) -m pytest $(BROWSER_TESTS) -m browser -p no:cacheprovider

# AddressSanitizer + UBSan build of the C core (without -fwrapv, see setup.py), then the test suite under it.
SAN_PRELOAD = LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)"
SAN_OPTIONS = ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=4096 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
asan: venv
	COSIM_SANITIZE=1 $(VPY) setup.py -q build_ext --inplace --force
	$(SAN_OPTIONS) $(SAN_PRELOAD) $(VPY) -m pytest tests -x -q -p no:cacheprovider -k "not notebook"
	$(VPY) setup.py -q build_ext --inplace --force

# Property-based fuzz of the public API (tests/test_fuzz.py): FUZZ_EXAMPLES batches of up to FUZZ_BATCH calls,
# each batch in a subprocess; random seed unless FUZZ_SEED is given. `make fuzz SANITIZE=1` = `make fuzz-asan`.
FUZZ_EXAMPLES ?= 500
FUZZ_BATCH    ?= 25
FUZZ_SEED     ?=
FUZZ_ENV = COSIM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) COSIM_FUZZ_BATCH=$(FUZZ_BATCH) COSIM_FUZZ_SEED=$(FUZZ_SEED)
ifeq ($(SANITIZE),1)
fuzz: fuzz-asan
else
fuzz: build
	$(FUZZ_ENV) $(VPY) -m pytest tests/test_fuzz.py tests/test_defects.py -x -p no:cacheprovider \
	  --hypothesis-show-statistics
endif

fuzz-asan: venv
	COSIM_SANITIZE=1 $(VPY) setup.py -q build_ext --inplace --force
	$(FUZZ_ENV) COSIM_FUZZ_TIMEOUT=300 $(SAN_OPTIONS) $(SAN_PRELOAD) $(VPY) -m pytest tests/test_fuzz.py \
	  tests/test_defects.py -x -p no:cacheprovider --hypothesis-show-statistics; \
	  rc=$$?; $(VPY) setup.py -q build_ext --inplace --force; exit $$rc

# dist/: the sdist and, built from it, one manylinux wheel per CPython in PYVERSIONS (default 3.10-3.13, from
# pyenv or PATH) that carries SUNDIALS, KLU, LAPACK/BLAS and libgfortran (auditwheel repair; packaging/).
wheel: deps
	bash packaging/build_wheels.sh

# The wheels on a machine without their native libraries (hidden in a private mount namespace): a fresh venv per
# interpreter runs the tests against the installed package (all of them on WHEEL_CHECK_FULL, default the newest
# Python; a subset on the others), a core-only venv shows the extras' ImportErrors, the sdist's missing-headers
# message is checked. Needs root (unshare -m).
wheel-check: wheel
	bash packaging/wheel_check.sh

valgrind: build
	.ci/valgrind.sh .venv/bin/python

clean:
	rm -rf build dist cosim/*.so out docs/_build docs/generated docs/auto_examples
