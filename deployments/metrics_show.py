"""Print every stage's metrics file (the ``metrics:`` of ``dvc.yaml``) as ``file  key  value`` lines, in about
0.1 s: what ``make demo`` shows when there is nothing to reproduce (``dvc metrics show`` prints the same numbers
as one wide table, and takes about 5 s on 2 cores to load DVC). Standard library + PyYAML only.

    python deployments/metrics_show.py [dvc.yaml]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml


def foreach_items(items: Any, params: Path) -> list[Any]:
    """A ``foreach`` list, or a ``${section.key}`` reference resolved from ``params.yaml`` as DVC does."""
    if isinstance(items, str) and items.startswith("${") and items.endswith("}"):
        value: Any = yaml.safe_load(params.read_text()) if params.is_file() else {}
        for key in items[2:-1].split("."):
            value = value[key]
        return list(value)
    return list(items)


def metrics_files(dvc_yaml: Path) -> list[Path]:
    """The metrics paths of every stage, ``foreach`` stages expanded over their items."""
    files: list[Path] = []
    for stage in (yaml.safe_load(dvc_yaml.read_text()) or {}).get("stages", {}).values():
        body, items = ((stage["do"], foreach_items(stage["foreach"], dvc_yaml.parent / "params.yaml"))
                       if "foreach" in stage else (stage, [None]))
        for m in body.get("metrics", []):
            path = next(iter(m)) if isinstance(m, dict) else m
            files += [Path(str(path).replace("${item}", str(i))) if i is not None else Path(path) for i in items]
    return list(dict.fromkeys(files))


def leaves(prefix: str, value: Any, lists: bool = True) -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value as ``(dotted.key, value)``; list items by index (``lists=False``: a list is one
    leaf)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(f"{prefix}.{k}" if prefix else str(k), v, lists)
    elif isinstance(value, list) and lists:
        for i, v in enumerate(value):
            yield from leaves(f"{prefix}[{i}]", v, lists)
    else:
        yield prefix, value


def flat(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    """The numeric leaves outside lists: what the metrics table shows."""
    return ((k, v) for k, v in leaves(prefix, value, lists=False) if isinstance(v, bool | int | float))


def main(argv: list[str]) -> int:
    dvc_yaml = Path(argv[0] if argv else "dvc.yaml")
    root = dvc_yaml.parent
    for f in metrics_files(dvc_yaml):
        if not (root / f).is_file():
            print(f"{f}  (not written yet)")
            continue
        for key, v in flat("", json.loads((root / f).read_text())):
            print(f"{f}  {key}  {v:.4g}" if isinstance(v, float) else f"{f}  {key}  {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
