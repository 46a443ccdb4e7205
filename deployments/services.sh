#!/usr/bin/env bash
# Start / stop the local services: Prefect server, MLflow server (both on 127.0.0.1), the work
# pools `cpu` and `gpu`, the deployments of deployments/prefect.yaml and a worker on `cpu`.
#   deployments/services.sh start | stop | status
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/.venv/bin"
RUN=.services
PREFECT_PORT="${PREFECT_PORT:-4200}"
MLFLOW_PORT="${MLFLOW_PORT:-5000}"
export PREFECT_API_URL="http://127.0.0.1:${PREFECT_PORT}/api"
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1 PATH="$BIN:$PATH"
export PREFECT_HOME="${PREFECT_HOME:-$PWD/.prefect}"

wait_http() {  # url, seconds
  for _ in $(seq "$2"); do curl -fsS "$1" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "timed out waiting for $1" >&2; return 1
}

start() {
  mkdir -p "$RUN"
  "$BIN/prefect" server start --host 127.0.0.1 --port "$PREFECT_PORT" >"$RUN/prefect.log" 2>&1 &
  echo $! >"$RUN/prefect.pid"
  "$BIN/mlflow" server --host 127.0.0.1 --port "$MLFLOW_PORT" --backend-store-uri sqlite:///mlruns.db \
    --default-artifact-root "$PWD/mlartifacts" --workers 1 >"$RUN/mlflow.log" 2>&1 &
  echo $! >"$RUN/mlflow.pid"
  wait_http "$PREFECT_API_URL/health" 90
  for pool in cpu gpu; do
    "$BIN/prefect" --no-prompt work-pool create "$pool" --type process >/dev/null 2>&1 || true
  done
  "$BIN/prefect" --no-prompt deploy --prefect-file deployments/prefect.yaml --all >"$RUN/deploy.log" 2>&1
  "$BIN/prefect" worker start --pool cpu >"$RUN/worker.log" 2>&1 &
  echo $! >"$RUN/worker.pid"
  wait_http "http://127.0.0.1:${MLFLOW_PORT}/health" 90
  cat <<MSG
Prefect UI   http://127.0.0.1:${PREFECT_PORT}   (deployments: nightly, rollouts, promote, train-gpu)
MLflow UI    http://127.0.0.1:${MLFLOW_PORT}
Run now:     PREFECT_API_URL=$PREFECT_API_URL .venv/bin/prefect deployment run 'pipeline/nightly'
Logs:        $RUN/*.log      Stop: make server-stop
MSG
}

stop() {
  for name in worker mlflow prefect; do
    if [[ -f "$RUN/$name.pid" ]]; then
      pid=$(cat "$RUN/$name.pid")
      kill -INT "$pid" 2>/dev/null || true
      for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL "$pid" 2>/dev/null || true
      rm -f "$RUN/$name.pid"
    fi
  done
}

status() {
  for name in prefect mlflow worker; do
    if [[ -f "$RUN/$name.pid" ]] && kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null; then echo "$name: running"; else echo "$name: stopped"; fi
  done
}

"${1:-status}"
