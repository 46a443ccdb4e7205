"""The experiments' result files: ``io.write_json``'s layout (sorted keys, indented objects, atomic), with every list
of numbers on one line, so per-episode outcomes (300 episodes × seeds × variants) take kilobytes, not megabytes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_NUMBERS = re.compile(r"\[\s+(-?[\d.eE+-]+(?:,\s+-?[\d.eE+-]+)*)\s+\]")


def dumps(obj: Any) -> str:
    """``json.dumps(obj, indent=1, sort_keys=True)`` with each list of plain numbers collapsed onto one line."""
    text = json.dumps(obj, indent=1, sort_keys=True, default=str)
    return _NUMBERS.sub(lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


def write_results(path: str | Path, obj: Any) -> Path:
    """Atomically write ``obj`` as :func:`dumps` lays it out; ``json.loads`` reads back the same object."""
    from embodied_safety.io import atomic_write_text

    return atomic_write_text(path, dumps(obj))


if __name__ == "__main__":  # rewrite result files in this layout: python experiments/results_json.py FILE ...
    import sys

    for name in sys.argv[1:]:
        before = json.loads(Path(name).read_text())
        write_results(name, before)
        assert json.loads(Path(name).read_text()) == before, name
