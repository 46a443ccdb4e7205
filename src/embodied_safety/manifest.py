"""``manifest.json`` for every output folder: resolved config, content hashes of the inputs, the code key, versions.

Everything in it is a function of the inputs, the code and the environment, so a re-run with identical inputs
writes an identical manifest (and DVC sees an unchanged output). The git commit is not in it: it goes to the
MLflow run's ``git_commit`` tag (``tasks/tracking.py``)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from .io import write_json

_PACKAGES = ("embodied-safety", "numpy", "bddl", "prefect", "dvc", "mlflow", "torch", "transformers", "trl", "peft")


def git_sha() -> str | None:
    """The checked-out commit, for MLflow tags (never written into a hashed output)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else :func:`platform.processor`), for MLflow tags: trained outputs
    differ between CPU families even with the same code, threads and kernel pins (docs/operations.md)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


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


def _label(path: str | os.PathLike[str]) -> str:
    """An input's name in the manifest: relative to the working directory when inside it (no absolute paths)."""
    p = Path(path)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            return p.name
    return p.as_posix()


def _caller_module(depth: int) -> str:
    frame = sys._getframe(depth + 1)
    name = frame.f_globals.get("__name__", "")
    if name == "__main__":
        spec = frame.f_globals.get("__spec__")
        name = spec.name if spec is not None else ""
    return name


def write_manifest(out_dir: str | os.PathLike[str], config: Any, inputs: Iterable[str | os.PathLike[str]] = (),
                   extra: dict[str, Any] | None = None, code: Iterable[str] | None = None) -> Path:
    """``out_dir/manifest.json``: ``config``, the content hash of each input (named relative to the working
    directory), ``code`` = the code key (:mod:`embodied_safety.codekey`) of the modules ``code`` (default: the
    module calling this, i.e. the stage), the package versions and ``extra``."""
    from .codekey import cached_code_key

    modules = tuple(code) if code is not None else (_caller_module(1),)
    cfg = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config
    return write_json(Path(out_dir) / "manifest.json", {
        "config": cfg,
        "code": {"modules": list(modules), "key": cached_code_key(*modules)} if any(modules) else None,
        "inputs": {_label(p): hash_path(p) for p in inputs if Path(p).exists()},
        "packages": package_versions(),
        "python": platform.python_version(),
        **(extra or {}),
    })
