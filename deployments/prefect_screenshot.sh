#!/usr/bin/env bash
# Headless-Chromium screenshots of a flow run page in the Prefect UI on its Artifacts tab (the stage's
# headline markdown, key-number table, progress), and of its results artifact.
#   deployments/prefect_screenshot.sh [OUT_DIR] [FLOW_RUN_ID]
# OUT_DIR defaults to reports/screenshots; FLOW_RUN_ID to the latest flow run that has artifacts.
# PREFECT_PORT as for `make server` (deployments/services.sh, 4200). Needs Debian's `chromium` (installed
# with apt-get when missing; root) and a running Prefect server that a stage has reported to (a server on another
# port than 4200 needs PREFECT_UI_API_URL=http://127.0.0.1:<port>/api when started, or its UI calls 4200).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-reports/screenshots}"
PREFECT_PORT="${PREFECT_PORT:-4200}"
UI="http://127.0.0.1:${PREFECT_PORT}"
API="$UI/api"
WAIT_MS="${SCREENSHOT_WAIT_MS:-20000}"
PY="${PYTHON:-.venv/bin/python}"
mkdir -p "$OUT"
# the flow run (given, or the latest with a markdown artifact) and its artifact ids
read -r RUN ART < <("$PY" - "$API" "${2:-}" <<'PY'
import json, sys, urllib.request
api, run = sys.argv[1], sys.argv[2]
def post(path, body):
    req = urllib.request.Request(api + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=30))
flt = {"sort": "CREATED_DESC", "limit": 50, "artifacts": {"type": {"any_": ["markdown"]}}}
if run:
    flt["artifacts"]["flow_run_id"] = {"any_": [run]}
arts = [a for a in post("/artifacts/filter", flt) if a.get("flow_run_id")]
if not arts:
    sys.exit("no flow run with a markdown artifact on " + api)
# prefer the newest run that also shows a progress artifact (a long loop: rollouts, training, PPO)
flt["artifacts"]["type"] = {"any_": ["progress"]}
with_progress = {a["flow_run_id"] for a in post("/artifacts/filter", flt)}
pick = next((a for a in arts if a["flow_run_id"] in with_progress), arts[0])
print(pick["flow_run_id"], pick["id"])
PY
)
WINDOW=1600,1100
source deployments/chromium.sh
# the UI ignores a ?tab= query on first load: open the run page and click its Artifacts tab (DevTools protocol)
shoot prefect_flow_run_artifacts "$UI/runs/flow-run/$RUN" Artifacts
shoot prefect_artifact "$UI/artifacts/artifact/$ART"
