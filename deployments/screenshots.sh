#!/usr/bin/env bash
# Headless-Chromium screenshots of the MLflow UI from the links `make server` prints: the runs view (in the
# "Model training" view) and the model page of `actor` (its champion version too, when there is one).
#   deployments/screenshots.sh [OUT_DIR]        (default reports/screenshots; MLFLOW_PORT as for make server)
# Needs Debian's `chromium` (installed with apt-get when missing; root) and a running `make server`.
# Each shot uses a new, throw-away profile and no network beyond 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-reports/screenshots}"
MLFLOW_PORT="${MLFLOW_PORT:-5000}"
WAIT_MS="${SCREENSHOT_WAIT_MS:-15000}"  # virtual time for the single-page app to load its data
mkdir -p "$OUT"
if ! command -v chromium >/dev/null; then
  echo "installing chromium (apt-get) ..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
links=$(MLFLOW_PORT="$MLFLOW_PORT" deployments/services.sh links)
echo "$links"
shoot() {  # name, url
  local profile
  profile=$(mktemp -d)
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --hide-scrollbars \
    --window-size=1600,1000 --virtual-time-budget="$WAIT_MS" --screenshot="$OUT/$1.png" "$2" >/dev/null 2>&1 || true
  rm -rf "$profile"
  if [[ -s "$OUT/$1.png" ]]; then echo "$OUT/$1.png  <- $2"; else echo "no screenshot for $2" >&2; return 1; fi
}
url_of() { awk -v k="$1" 'index($0, k) == 1 {print $NF == "" ? "" : $0}' <<<"$links" | grep -o 'http://[^ ]*' | head -1; }
shoot mlflow_runs "$(url_of 'MLflow runs')"
model=$(url_of "Model 'actor'")
if [[ -n "$model" ]]; then shoot mlflow_model_actor "$model"; else shoot mlflow_models "$(url_of 'Model registry')"; fi
champion=$(url_of Champion)
[[ -z "$champion" ]] || shoot mlflow_champion "$champion"
