# Sourced by the screenshot scripts: headless Chromium from Debian's packages and one `shoot NAME URL [TAB]`.
# Needs OUT (the output folder) and WAIT_MS (time for a single-page app to load its data) set; WINDOW
# (default 1600,1000) sets the viewport; TAB, when given, is clicked before the shot. The browser itself is
# driven by deployments/browser_shot.py (a new, throw-away profile per shot, no network beyond 127.0.0.1).
if ! command -v chromium >/dev/null; then
  echo "installing chromium (apt-get) ..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
shoot() {  # name, url, [tab to click]
  "${PY:-.venv/bin/python}" deployments/browser_shot.py "$2" "$OUT/$1.png" --wait "$(( WAIT_MS / 1000 ))" \
    --window "${WINDOW:-1600,1000}" ${3:+--click "$3"} || { echo "no screenshot for $2" >&2; return 1; }
}
