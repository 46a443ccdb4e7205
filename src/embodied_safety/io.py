"""Atomic file writes and JSON/JSONL helpers (every write: temp file in the same folder + rename)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a partial one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode())


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> Path:
    return atomic_write_text(path, "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rows))


def read_jsonl(path: str | os.PathLike[str]) -> list[Any]:
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def replace_dir(tmp: str | os.PathLike[str], final: str | os.PathLike[str]) -> Path:
    """Swap a fully written ``tmp`` folder into place at ``final`` (old contents removed after)."""
    import shutil

    tmp, final = Path(tmp), Path(final)
    trash = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, trash)
    os.replace(tmp, final)
    shutil.rmtree(trash, ignore_errors=True)
    return final


def scratch_dir(final: str | os.PathLike[str]) -> Path:
    """A run-scoped temporary folder beside ``final`` (same filesystem, so the swap is a rename)."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.tmp-"))


def clear_scratch(final: str | os.PathLike[str]) -> list[Path]:
    """Remove what a failed or killed writer of ``final`` left beside it (:func:`scratch_dir`'s ``.<name>.tmp-*``
    folders, :func:`replace_dir`'s ``.<name>.old-*`` trash); returns the removed paths. Only for a path one process
    writes at a time (a stage's declared output): inside a parent folder that another stage hashes, such leftovers
    would change that stage's deps, and no run can resume from them (their names are random)."""
    import shutil

    final = Path(final)
    if not final.parent.is_dir():
        return []
    gone = sorted([*final.parent.glob(f".{final.name}.tmp-*"), *final.parent.glob(f".{final.name}.old-*")])
    for p in gone:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return gone


#: keys of wall-clock measurements (HF Trainer's ``train_runtime``, ``*_per_second``; our ``seconds``)
_TIMING_KEYS = ("runtime", "seconds", "per_second", "elapsed")
#: keys naming a run's place in a registry (an MLflow model version counts up with every run in a workspace)
_REGISTRY_KEYS = ("version", "critic_version")


def without_run_facts(obj: Any) -> Any:
    """``obj`` with every dict key that names a wall-clock measurement or a registry version removed, recursively: for
    files inside an output folder, whose bytes must depend on the inputs and the code only (DVC hashes them; a fresh
    clone must reproduce them byte for byte). Timings and versions go to MLflow."""
    if isinstance(obj, dict):
        return {k: without_run_facts(v) for k, v in obj.items()
                if not ((leaf := str(k).rsplit("/", 1)[-1]).endswith(_TIMING_KEYS) or leaf in _REGISTRY_KEYS)}
    if isinstance(obj, list | tuple):
        return [without_run_facts(v) for v in obj]
    return obj


def read_json(path: str | os.PathLike[str]) -> Any:
    with open(path) as fh:
        return json.load(fh)
