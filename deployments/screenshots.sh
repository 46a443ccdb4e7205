#!/usr/bin/env bash
# Headless-Chromium screenshots of the MLflow UI from the links `make server` prints: the runs view (in the
# "Model training" view) and the model page of `actor` (its champion version too, when there is one).
#   deployments/screenshots.sh [OUT_DIR]        (default reports/screenshots; MLFLOW_PORT as for make server)
# Needs Debian's `chromium` (installed with apt-get when missing; root) and a running `make server`.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-reports/screenshots}"
MLFLOW_PORT="${MLFLOW_PORT:-5000}"
WAIT_MS="${SCREENSHOT_WAIT_MS:-15000}"  # virtual time for the single-page app to load its data
mkdir -p "$OUT"
links=$(MLFLOW_PORT="$MLFLOW_PORT" deployments/services.sh links)
echo "$links"
source deployments/chromium.sh
url_of() { awk -v k="$1" 'index($0, k) == 1 {print $NF == "" ? "" : $0}' <<<"$links" | grep -o 'http://[^ ]*' | head -1; }
shoot mlflow_runs "$(url_of 'MLflow runs')"
model=$(url_of "Model 'actor'")
if [[ -n "$model" ]]; then shoot mlflow_model_actor "$model"; else shoot mlflow_models "$(url_of 'Model registry')"; fi
champion=$(url_of Champion)
[[ -z "$champion" ]] || shoot mlflow_champion "$champion"
