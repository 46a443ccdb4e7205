"""``manifest.json`` for every output folder: resolved config, git SHA, input hashes, versions."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import platform
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from .io import write_json

_PACKAGES = ("embodied-safety", "numpy", "bddl", "prefect", "dvc", "mlflow", "torch", "transformers", "trl", "peft")


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def hash_path(path: str | os.PathLike[str]) -> str:
    """Content hash of a file or a directory tree (names and bytes, order-independent)."""
    path = Path(path)
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        h.update(str(f.relative_to(path) if path.is_dir() else f.name).encode())
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def package_versions(names: Iterable[str] = _PACKAGES) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def write_manifest(out_dir: str | os.PathLike[str], config: Any, inputs: Iterable[str | os.PathLike[str]] = (),
                   extra: dict[str, Any] | None = None) -> Path:
    cfg = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config
    return write_json(Path(out_dir) / "manifest.json", {
        "config": cfg,
        "git_sha": git_sha(),
        "inputs": {str(p): hash_path(p) for p in inputs if Path(p).exists()},
        "packages": package_versions(),
        "python": platform.python_version(),
        **(extra or {}),
    })
