#!/usr/bin/env bash
# Start / stop the local services: Prefect server, MLflow server (both on 127.0.0.1), the work
# pools `cpu` and `gpu`, the deployments of deployments/prefect.yaml and a worker on `cpu`.
#   deployments/services.sh start | stop | status | links
# Ports: PREFECT_PORT (4200), MLFLOW_PORT (5000). One line of progress per service.
# The `gpu` pool stays "Not Ready" until a worker polls it: on a GPU machine with this checkout,
#   PREFECT_API_URL=http://<this host>:4200/api .venv/bin/prefect worker start --pool gpu
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/.venv/bin"
RUN=.services
PREFECT_PORT="${PREFECT_PORT:-4200}"
MLFLOW_PORT="${MLFLOW_PORT:-5000}"
MLFLOW_URL="http://127.0.0.1:${MLFLOW_PORT}"
export PREFECT_API_URL="http://127.0.0.1:${PREFECT_PORT}/api"
# MLflow reads only MLFLOW_DISABLE_TELEMETRY (DO_NOT_TRACK does not turn its telemetry off)
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1 MLFLOW_DISABLE_TELEMETRY=true PATH="$BIN:$PATH"
export PREFECT_HOME="${PREFECT_HOME:-$PWD/.prefect}"

wait_http() {  # url, seconds, pid: fails early when the process died
  for _ in $(seq "$2"); do
    curl -fsS "$1" >/dev/null 2>&1 && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

launch() {  # name, log, command...: its own session, so stop can end its whole process group
  local name=$1 log=$2; shift 2
  setsid "$@" >"$log" 2>&1 < /dev/null &
  echo $! >"$RUN/$name.pid"
}

step() { printf '%-44s' "$1 ..."; SECONDS=0; }
ok() { echo " ok (${SECONDS} s)${1:+ $1}"; }
fail() { echo " FAILED: $1" >&2; exit 1; }

start() {
  mkdir -p "$RUN"
  for spec in "Prefect:$PREFECT_PORT:PREFECT_PORT" "MLflow:$MLFLOW_PORT:MLFLOW_PORT"; do
    IFS=: read -r what port var <<<"$spec"
    if port_busy "$port"; then
      echo "$what: port $port is busy (already running? \`make server-stop\`; or set $var=<free port>)" >&2; exit 1
    fi
  done
  step "Prefect server  http://127.0.0.1:${PREFECT_PORT}"
  launch prefect "$RUN/prefect.log" "$BIN/prefect" server start --host 127.0.0.1 --port "$PREFECT_PORT"
  # MLflow starts meanwhile (~15 s; the first start creates the tables). Artifact paths are relative to
  # this folder (tasks/tracking.py): relocate rewrites the absolute ones an older or moved store holds.
  "$BIN/python" -m tasks.tracking relocate >"$RUN/relocate.log" 2>&1 || true
  # job execution (GenAI scorers, trace roll-ups; unused here) would start 7 huey consumer processes beside it
  MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false launch mlflow "$RUN/mlflow.log" "$BIN/mlflow" server --host 127.0.0.1 --port "$MLFLOW_PORT" \
    --backend-store-uri sqlite:///mlruns.db --serve-artifacts --artifacts-destination ./mlartifacts --workers 1
  mlflow_t0=$(date +%s)
  wait_http "$PREFECT_API_URL/health" 120 "$(cat "$RUN/prefect.pid")" || fail "see $RUN/prefect.log"
  ok

  step "work pools cpu, gpu"
  for pool in cpu gpu; do
    "$BIN/prefect" --no-prompt work-pool create "$pool" --type process >/dev/null 2>&1 || true
  done
  ok

  step "deployments (deployments/prefect.yaml)"
  "$BIN/prefect" --no-prompt deploy --prefect-file deployments/prefect.yaml --all >"$RUN/deploy.log" 2>&1 \
    || fail "see $RUN/deploy.log"
  ok "nightly, rollouts, promote, train-gpu, scorecard/adhoc, scorecard/champion"

  step "worker on pool cpu"
  launch worker "$RUN/worker.log" "$BIN/prefect" worker start --pool cpu
  sleep 2
  kill -0 "$(cat "$RUN/worker.pid")" 2>/dev/null || fail "see $RUN/worker.log"
  ok

  step "MLflow server   ${MLFLOW_URL}"
  wait_http "$MLFLOW_URL/health" 120 "$(cat "$RUN/mlflow.pid")" || fail "see $RUN/mlflow.log"
  SECONDS=$(( $(date +%s) - mlflow_t0 ))
  ok
  echo
  links
  cat <<MSG

Prefect UI   http://127.0.0.1:${PREFECT_PORT}   (deployments: nightly at 03:00 UTC, rollouts, promote, train-gpu, scorecard/adhoc, scorecard/champion)
Run now:     PREFECT_API_URL=$PREFECT_API_URL .venv/bin/prefect deployment run 'pipeline/nightly'
gpu pool:    "Not Ready" until a GPU machine runs: prefect worker start --pool gpu (README)
Logs:        $RUN/*.log      Stop: make server-stop
MSG
}

links() {  # direct links into the MLflow UI, opened on the "Model training" view
  "$BIN/python" - "$MLFLOW_URL" <<'PY'
import json, sys, urllib.parse, urllib.request

url = sys.argv[1]
def get(path, **query):
    try:
        with urllib.request.urlopen(f"{url}/api/2.0/mlflow/{path}?{urllib.parse.urlencode(query)}", timeout=10) as r:
            return json.load(r)
    except Exception:
        return None

ml = "workflowType=machine_learning"
exp = (get("experiments/get-by-name", experiment_name="embodied-safety") or {}).get("experiment")
if exp:
    print(f"MLflow runs      {url}/#/experiments/{exp['experiment_id']}/runs?{ml}")
else:
    print(f"MLflow runs      {url}/#/experiments?{ml}   (no run yet: the experiment embodied-safety appears "
          "with the first stage)")
print(f"Model registry   {url}/#/models?{ml}")
model = (get("registered-models/get", name="actor") or {}).get("registered_model")
if model:
    print(f"Model 'actor'    {url}/#/models/actor?{ml}")
    champion = get("registered-models/alias", name="actor", alias="champion")
    if champion and "model_version" in champion:
        print(f"Champion         {url}/#/models/actor/versions/{champion['model_version']['version']}?{ml}")
PY
}

stop() {
  local any=0
  for name in worker mlflow prefect; do
    if [[ -f "$RUN/$name.pid" ]]; then
      any=1
      pid=$(cat "$RUN/$name.pid")
      step "stopping $name (pid $pid)"
      if kill -0 "$pid" 2>/dev/null; then
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        if kill -0 "$pid" 2>/dev/null; then
          kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
          ok "(killed)"
        else
          ok
        fi
      else
        ok "(was not running)"
      fi
      rm -f "$RUN/$name.pid"
    fi
  done
  [[ $any == 1 ]] || echo "nothing to stop (no $RUN/*.pid)"
}

status() {
  for name in prefect mlflow worker; do
    if [[ -f "$RUN/$name.pid" ]] && kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null; then echo "$name: running"; else echo "$name: stopped"; fi
  done
}

"${1:-status}"
