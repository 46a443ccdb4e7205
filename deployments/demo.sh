#!/usr/bin/env bash
# `make demo`: `dvc repro` with one Prefect server for every stage, then the metrics. Stages run with one torch thread
# (OMP_NUM_THREADS) whatever the core count, and the DAG's independent parts run side by side, one lane per core
# (deployments/parallel_repro.py: a git worktree per extra lane sharing the DVC cache).
#   deployments/demo.sh [dvc repro args...]
# Run alone, each stage (`python -m flows.<stage>`) starts a temporary Prefect server of its own: 15-20 s per
# stage on 2 cores, and on a loaded machine the start can run past Prefect's start-up timeout. Here one server
# (project-local PREFECT_HOME, a free port on 127.0.0.1) serves the whole repro and stops with it. With
# PREFECT_API_URL set (e.g. `make server` is running) the stages report there instead. With nothing to
# reproduce (`dvc status` is {}) it starts nothing and prints the metrics files (deployments/metrics_show.py).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH" PREFECT_SERVER_ANALYTICS_ENABLED=false PREFECT_HOME="${PREFECT_HOME:-$PWD/.prefect}"
status=$(dvc status --json 2>/dev/null || true)
if [[ "$status" == "{}" ]]; then  # nothing to reproduce: `dvc repro` would only check again (~12 s)
  echo "Every stage is up to date (dvc status); the metrics (\`dvc metrics show\` has them as one table):"
  exec python deployments/metrics_show.py
fi
if [[ -z "${PREFECT_API_URL:-}" ]]; then
  port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p .services
  printf '%s' "Prefect server for this run  http://127.0.0.1:$port ..."
  # this run's own server: its runs are watched, never scheduled, so the loop services that schedule, expire, cancel,
  # vacuum or trigger runs stay off (3.3 s of CPU to start instead of 8.4 s, 1.1 % of a core idle instead of 1.6 %)
  for service in SCHEDULER LATE_RUNS FOREMAN PAUSE_EXPIRATIONS CANCELLATION_CLEANUP REPOSSESSOR TRIGGERS DB_VACUUM \
                 CLEANUP_RECONCILER; do
    var="PREFECT_SERVER_SERVICES_${service}_ENABLED"
    export "$var=${!var:-false}"  # a value you set wins
  done
  setsid prefect server start --host 127.0.0.1 --port "$port" >.services/demo-prefect.log 2>&1 </dev/null &
  pid=$!
  trap 'kill -- "-$pid" 2>/dev/null || true' EXIT
  export PREFECT_API_URL="http://127.0.0.1:$port/api"
  SECONDS=0
  until curl -fsS "$PREFECT_API_URL/health" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo " FAILED: see .services/demo-prefect.log" >&2; exit 1; }
    (( SECONDS < 300 )) || { echo " FAILED: no answer in 300 s (.services/demo-prefect.log)" >&2; exit 1; }
    sleep 1
  done
  echo " ok (${SECONDS} s)"
fi
# stages run with pinned torch threads (their results depend on it); with arguments a plain `dvc repro "$@"`; without,
# the DAG's independent parts side by side, one lane per core
python deployments/parallel_repro.py --status - "$@" <<<"$status"
python deployments/metrics_show.py  # `dvc metrics show` prints the same numbers as one very wide table
