"""Content keys for stored shards: a shard's file is named by the hash of everything that determines it,
so a re-run loads what is done and computes only what is missing (or changed)."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src" / "embodied_safety"


@cache
def source_hash(*packages: str) -> str:
    """The sources (``.py``, ``.txt``, ``.xml``; never bytecode) of ``src/embodied_safety/<package>`` folders, or of
    single files named relative to ``src/embodied_safety``."""
    h = hashlib.sha256()
    files = (f for p in packages for f in ([SRC / p] if (SRC / p).is_file() else (SRC / p).rglob("*")))
    for f in sorted(f for f in files if f.suffix in (".py", ".txt", ".xml")):
        h.update(str(f.relative_to(SRC)).encode() + f.read_bytes())
    return h.hexdigest()[:16]


def content_key(blob: Any) -> str:
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:20]
