"""The structured ask behind every LLM/VLM call: send, parse, re-ask only the items whose reply did not parse.

Attempt ``a`` (0 = the first ask) of every item still open goes out in one call
``complete(open_items, temperature if a == 0 else retry_temperature, seed + a)``, which returns one reply per
item, in order; what an item is (a prompt, a chat message list) and how a batch is sent (one batched
``generate``, one request per item) is the caller's. ``parse`` (one for all items or one per item) returns the
value or raises ValueError; after ``retries`` re-asks an item is a failed :class:`Answer` with the last error,
never a guess. Any other exception (an endpoint that failed for good) propagates: it is not a bad reply.

:func:`ask_cached` puts an on-disk cache in front: one JSON file ``<key>.json`` per item holding
``{"ok", "value", "error", "raw", "model"}``, written atomically through :mod:`embodied_safety.io`, so a re-run
makes no call. ``cache_failures=False`` stores successes only (a failure is asked again next time);
``retry_failed=True`` re-asks the failures that are stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..io import read_json, write_json

Q = TypeVar("Q")
Parse = Callable[[str], Any]


@dataclass(frozen=True)
class Answer:
    """One question: the parsed value or the last error, every raw reply, the requests made *now* (0: cached)."""

    ok: bool
    value: Any
    error: str | None
    raw: tuple[str, ...]
    calls: int


def cache_key(*parts: str | bytes) -> str:
    """SHA-256 over the length-prefixed parts (model, prompt, frame bytes, ...), so no two part lists collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def _parsers(parse: Parse | Sequence[Parse], n: int) -> list[Parse]:
    if callable(parse):
        return [parse] * n
    if len(parse) != n:
        raise ValueError(f"{len(parse)} parsers for {n} items")
    return list(parse)


def ask_batch(complete: Callable[[list[Q], float, int], Sequence[str]], items: Sequence[Q],
              parse: Parse | Sequence[Parse], retries: int, temperature: float = 0.0,
              retry_temperature: float | None = None, seed: int = 0) -> list[Answer]:
    """Ask every item, re-ask those whose reply ``parse`` rejects (up to ``retries`` times); see the module doc.
    ``retry_temperature=None`` re-asks at ``temperature``."""
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    parsers = _parsers(parse, len(items))
    again = temperature if retry_temperature is None else retry_temperature
    raw: list[list[str]] = [[] for _ in items]
    values: list[Any] = [None] * len(items)
    errors: list[str | None] = ["no attempt"] * len(items)
    todo = list(range(len(items)))
    for attempt in range(retries + 1):
        if not todo:
            break
        replies = list(complete([items[i] for i in todo], temperature if attempt == 0 else again, seed + attempt))
        if len(replies) != len(todo):
            raise RuntimeError(f"complete() returned {len(replies)} replies for {len(todo)} items")
        failed = []
        for i, text in zip(todo, replies, strict=True):
            raw[i].append(text)
            try:
                values[i], errors[i] = parsers[i](text), None
            except ValueError as exc:
                errors[i] = str(exc)
                failed.append(i)
        todo = failed
    return [Answer(errors[i] is None, values[i], errors[i], tuple(raw[i]), len(raw[i])) for i in range(len(items))]


def ask_cached(complete: Callable[[list[Q], float, int], Sequence[str]], items: Sequence[Q], keys: Sequence[str],
               parse: Parse | Sequence[Parse], cache_dir: str | Path | None, model: str, retries: int,
               temperature: float = 0.0, retry_temperature: float | None = None, seed: int = 0,
               cache_failures: bool = True, retry_failed: bool = False) -> list[Answer]:
    """:func:`ask_batch` over the items whose key has no usable ``<cache_dir>/<key>.json``; the new answers are
    stored (failures only with ``cache_failures``). ``cache_dir=None``: no cache."""
    if len(keys) != len(items):
        raise ValueError(f"{len(keys)} keys for {len(items)} items")
    parsers = _parsers(parse, len(items))
    paths = [Path(cache_dir) / f"{k}.json" if cache_dir is not None else None for k in keys]
    answers: list[Answer | None] = [None] * len(items)
    for i, path in enumerate(paths):
        if path is not None and path.is_file():
            rec = read_json(path)
            if rec["ok"] or not retry_failed:
                answers[i] = Answer(rec["ok"], rec["value"], rec["error"], tuple(rec["raw"]), 0)
    todo = [i for i, a in enumerate(answers) if a is None]
    fresh = ask_batch(complete, [items[i] for i in todo], [parsers[i] for i in todo], retries, temperature,
                      retry_temperature, seed)
    for i, answer in zip(todo, fresh, strict=True):
        answers[i] = answer
        path = paths[i]
        if path is not None and (answer.ok or cache_failures):
            write_json(path, {"ok": answer.ok, "value": answer.value, "error": answer.error, "raw": list(answer.raw),
                              "model": model})
    return answers  # type: ignore[return-value]
