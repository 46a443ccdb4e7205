"""Content keys for stored shards: a shard's file is named by the hash of everything that determines it,
so a re-run loads what is done and computes only what is missing (or changed)."""

from __future__ import annotations

import dataclasses
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


#: The version of :func:`config_key`'s rule. A config enters a content key as the fields whose values differ from
#: their defaults, so adding a field with a default that keeps the old behaviour leaves every stored key as it was.
#: Changing an existing field's default changes what an absent field means: bump this then (the test
#: ``tests/unit/test_content_keys.py`` holds the keyed defaults and fails on a changed one until this is bumped).
KEY_SCHEMA = 1


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _non_default(cfg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value, default = getattr(cfg, f.name), _default(f)
        if default is not dataclasses.MISSING and value == default:
            continue
        # a nested config by its own non-default fields (omitted above exactly when it equals the field's default)
        out[f.name] = _non_default(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value
    return out


def config_key(cfg: Any) -> dict[str, Any]:
    """A dataclass config as it enters a content key: :data:`KEY_SCHEMA` and the fields that differ from their
    defaults (nested dataclasses likewise). Two configs get the same key exactly when they set the same values."""
    return {"schema": KEY_SCHEMA, "type": type(cfg).__name__, "set": _non_default(cfg)}
