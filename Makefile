# The two commands: `make demo` (set up + run the pipeline on embedded defaults), `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed

export PATH := $(BIN):$(PATH)
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
export DVC_NO_ANALYTICS := 1
export HF_HUB_OFFLINE := 1
export MUJOCO_GL := egl
export MPLBACKEND := Agg

.PHONY: setup demo test lint bench clean

setup: $(STAMP)  ## create .venv and install the project with its pipeline and dev extras

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[pipeline,dev]'
	touch $(STAMP)

demo: setup  ## run the whole pipeline with DVC (stages run as Prefect flows), then show metrics
	dvc repro
	dvc metrics show

test: setup  ## the test suite (unit, flow and smoke tiers; slow tests included)
	pytest -q

lint: setup
	ruff check src flows tasks tests benchmarks

bench: setup  ## speed benchmarks, printed as ratios against a baseline in the same process
	python benchmarks/household_world.py

clean:
	rm -rf data/household .prefect
