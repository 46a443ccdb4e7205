# Sourced by the screenshot scripts: headless Chromium from Debian's packages and one `shoot NAME URL`.
# Needs OUT (the output folder) and WAIT_MS (virtual time for a single-page app to load its data) set;
# WINDOW (default 1600,1000) sets the viewport. Each shot uses a new, throw-away profile and no network
# beyond 127.0.0.1.
if ! command -v chromium >/dev/null; then
  echo "installing chromium (apt-get) ..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
shoot() {  # name, url
  local profile
  profile=$(mktemp -d)
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --hide-scrollbars \
    --window-size="${WINDOW:-1600,1000}" --virtual-time-budget="$WAIT_MS" --screenshot="$OUT/$1.png" "$2" \
    >/dev/null 2>&1 || true
  rm -rf "$profile"
  if [[ -s "$OUT/$1.png" ]]; then echo "$OUT/$1.png  <- $2"; else echo "no screenshot for $2" >&2; return 1; fi
}
