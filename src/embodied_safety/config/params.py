"""Reading ``params.yaml`` sections into their config dataclasses."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_PARAMS = Path("params.yaml")


def from_dict(cls: type[T], raw: dict[str, Any] | None, section: str) -> T:
    """Build ``cls`` from a mapping, naming the section and key of any unknown field."""
    raw = dict(raw or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ValueError(f"params.yaml: {section}: unknown key(s) {unknown}; expected some of {sorted(fields)}")
    for key, value in list(raw.items()):
        if isinstance(value, list):
            raw[key] = tuple(value)
    return cls(**raw)


def load_params(section: str, cls: type[T], path: str | os.PathLike[str] = DEFAULT_PARAMS) -> T:
    """Read one section of ``params.yaml`` into its dataclass (defaults when the file is absent)."""
    import yaml

    path = Path(path)
    data = yaml.safe_load(path.read_text()) if path.is_file() else {}
    return from_dict(cls, (data or {}).get(section), section)

