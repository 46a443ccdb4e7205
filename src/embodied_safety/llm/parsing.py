"""JSON in model replies: the first ``{...}`` that decodes as an object, prose around it ignored."""

from __future__ import annotations

import json
from typing import Any


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first ``{...}`` in ``text`` that decodes as a JSON object (prose around it is ignored)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    return None


def json_object(text: str) -> dict[str, Any]:
    """:func:`first_json_object`, or ValueError naming the start of the reply (a parser for :func:`.ask.ask_batch`)."""
    obj = first_json_object(text)
    if obj is None:
        raise ValueError(f"no JSON object in {text[:120]!r}")
    return obj
