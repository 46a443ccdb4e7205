"""A screenshot of a page after clicking one of its tabs, in headless Chromium over the DevTools protocol.

    python deployments/browser_shot.py URL OUT.png [--click LABEL] [--wait SECONDS] [--window W,H]

``chromium --screenshot`` cannot click, and the Prefect UI (3.x) ignores a ``?tab=`` query on first load, so a
flow run page always opens on *Logs*. This opens URL, waits for the single-page app, clicks the tab (``role="tab"`` or the
Prefect UI's ``li.p-tab``; else a button / link) whose text is LABEL, waits again and saves a PNG. Debian's ``chromium`` and
the ``websockets`` package (a Prefect dependency) are all it needs; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

CLICK_JS = """(label => {
  const els = [...document.querySelectorAll('[role="tab"], .p-tab, li, button, a')];
  const el = els.find(e => e.textContent.trim() === label);
  if (!el) return false;
  el.click();
  return true;
})(%s)"""


class Page:
    """One DevTools page session: ``call(method, **params)`` returns the result, events are skipped."""

    def __init__(self, ws_url: str) -> None:
        self.ws = connect(ws_url, max_size=64 * 2**20, open_timeout=30)
        self.ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})


def _devtools_url(proc: subprocess.Popen[str], timeout_s: float = 30.0) -> str:
    assert proc.stderr is not None
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        line = proc.stderr.readline()
        m = re.search(r"DevTools listening on (ws://\S+)", line)
        if m:
            return m.group(1)
        if not line and proc.poll() is not None:
            break
    raise RuntimeError("chromium did not start its DevTools endpoint")


def _page_target(browser_ws: str) -> str:
    port = re.search(r":(\d+)/", browser_ws).group(1)  # type: ignore[union-attr]
    targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
    return next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")


def shoot(url: str, out: Path, click: str | None = None, wait_s: float = 12.0, window: tuple[int, int] = (1600, 1100),
          chromium: str = "chromium") -> bool:
    """Save ``out``; True when ``click`` (if given) was found and clicked."""
    profile = tempfile.mkdtemp()
    proc = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                             "--disable-background-networking", "--disable-component-update", "--disable-sync",
                             "--hide-scrollbars", f"--user-data-dir={profile}", "--remote-debugging-port=0",
                             f"--window-size={window[0]},{window[1]}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        page = Page(_page_target(_devtools_url(proc)))
        page.call("Page.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=window[0], height=window[1], deviceScaleFactor=1,
                  mobile=False)
        page.call("Page.navigate", url=url)
        time.sleep(wait_s)
        clicked = True
        if click:
            for _ in range(10):  # the tab bar may render after the data
                clicked = bool(page.call("Runtime.evaluate", expression=CLICK_JS % json.dumps(click),
                                         returnByValue=True)["result"].get("value"))
                if clicked:
                    break
                time.sleep(2)
            time.sleep(wait_s / 2)
        png = page.call("Page.captureScreenshot", format="png")["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp.png")
        tmp.write_bytes(base64.b64decode(png))
        tmp.replace(out)
        return clicked
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url")
    p.add_argument("out", type=Path)
    p.add_argument("--click", help="the text of the tab (or button / link) to click before the screenshot")
    p.add_argument("--wait", type=float, default=12.0, help="seconds for the page to load its data (default 12)")
    p.add_argument("--window", default="1600,1100", help="viewport W,H (default 1600,1100)")
    args = p.parse_args(argv)
    w, h = (int(x) for x in args.window.split(","))
    clicked = shoot(args.url, args.out, args.click, args.wait, (w, h))
    if not clicked:
        print(f"{args.out}: no tab {args.click!r} on {args.url}", file=sys.stderr)
        return 1
    print(f"{args.out}  <- {args.url}" + (f"  (tab {args.click})" if args.click else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
