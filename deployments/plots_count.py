"""Count what `dvc plots show --json` / `dvc plots diff --json` would draw, so a run can say "every declared series".

    dvc plots show --json | python deployments/plots_count.py
    dvc plots diff HEAD my-exp --json | python deployments/plots_count.py

A data series is a distinct (revision, file, field, panel, series) in a vega plot's rows (the project templates draw
a line or bar group per ``series`` and a panel per ``panel``); an image plot counts once per revision. Errors DVC
reports (e.g. a plot file no stage outputs, missing at a git revision) are printed last.
"""
import json
import sys
from collections import defaultdict

doc = json.load(sys.stdin)
data = doc.get("data", doc)
series, images, empty = defaultdict(set), defaultdict(set), []
for pid, entries in data.items():
    for e in entries:
        if e.get("type") == "image":
            images[pid].update(e.get("revisions", []))
            continue
        content = e.get("content", {})
        vals = (content.get("data") or {}).get("values") or []
        if isinstance(content.get("datasets"), dict):
            vals = [v for vs in content["datasets"].values() for v in vs]
        for v in vals:
            series[pid].add((v.get("rev"), v.get("filename"), v.get("field"), v.get("panel"), v.get("series")))
        if not vals:
            empty.append(pid)
n_series = sum(len(s) for s in series.values())
print(f"plot ids: {len(data)} (vega {len(series)}, image {len(images)}); vega series (rev, file, field, panel, series): {n_series}; "
      f"image renders: {sum(len(r) for r in images.values())}; vega plots without data: {len(set(empty) - set(series))}")
for pid in sorted(series):
    revs = sorted({r for r, *_ in series[pid]})
    print(f"  {pid}: {len(series[pid])} series, revs {revs}")
if doc.get("errors"):
    print("errors:", json.dumps(doc["errors"])[:2000])
