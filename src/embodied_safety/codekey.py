"""Code keys: which repository files decide a module's behaviour, and one hash of them.

The *import closure* of a module is the set of repository files Python may execute or read when the module
runs: the module's file, every module of ``embodied_safety``, ``flows`` or ``tasks`` it imports (at the top
or inside a function; ``from pkg import name`` counts ``pkg.name`` when that is a module), transitively,
the ``__init__.py`` of every package on the way, and the data folders a module is declared to read
(:data:`DATA`, e.g. prompt templates). It is computed from the source with :mod:`ast`: nothing is imported.

The *code key* is the SHA-256 of those files (path relative to the repository root, then bytes, sorted by
path). It is the code part of each DVC stage's deps (``flows/stages.py`` writes them into ``dvc.yaml``), of
rollout shard keys and of every ``manifest.json``. Third-party packages are not part of it: their versions
are pinned by the lock file, not hashed here.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve()
#: the checkout (``src/`` layout); in an installed wheel, the folder holding the packages (site-packages)
REPO = _HERE.parents[2] if _HERE.parents[1].name == "src" else _HERE.parents[1]
_SRC = "src/" if _HERE.parents[1].name == "src" else ""
#: top-level package -> the folder holding it, relative to :data:`REPO`
PACKAGES: Mapping[str, str] = {"embodied_safety": f"{_SRC}embodied_safety", "flows": "flows", "tasks": "tasks"}
#: module -> non-Python files it reads at run time (``importlib.resources``), relative to :data:`REPO`
DATA: Mapping[str, tuple[str, ...]] = {
    "embodied_safety.actors.prompts": (f"{_SRC}embodied_safety/actors/prompts",),
    "embodied_safety.critics.llm": (f"{_SRC}embodied_safety/critics/prompts",),
    "embodied_safety.agentbench.planners": (f"{_SRC}embodied_safety/agentbench/prompts",),
    "embodied_safety.shield.costs.vlm_scorer": (f"{_SRC}embodied_safety/shield/costs/prompts",),
    "embodied_safety.envs.control._mujoco": (f"{_SRC}embodied_safety/envs/control/assets",),
}
_DATA_SUFFIXES = (".txt", ".xml", ".json", ".yaml")


def module_file(name: str, root: Path = REPO) -> Path | None:
    """The file of a repository module (``pkg/__init__.py`` for a package), or None (third-party, missing)."""
    top, _, rest = name.partition(".")
    if top not in PACKAGES:
        return None
    base = root / PACKAGES[top]
    parts = rest.split(".") if rest else []
    pkg = base.joinpath(*parts) / "__init__.py"
    if pkg.is_file():
        return pkg
    mod = base.joinpath(*parts[:-1], f"{parts[-1]}.py") if parts else None
    return mod if mod is not None and mod.is_file() else None


def _is_package(name: str, root: Path) -> bool:
    f = module_file(name, root)
    return f is not None and f.name == "__init__.py"


#: an entry point into a repository module, ``"pkg.module:attr"`` (Gymnasium's ``register(entry_point=...)``, a
#: plugin registry): the module is imported when a registry uses the string, so it is part of the closure
_ENTRY_POINT = re.compile(r"(?:embodied_safety|flows|tasks)(?:\.[A-Za-z_]\w*)+:[A-Za-z_][\w.]*")


def imported_modules(name: str, root: Path = REPO) -> set[str]:
    """Names of the repository modules ``name`` imports directly: every ``import`` statement in its source, and every
    string constant that is an entry point into one (``"embodied_safety.envs.control.franka:FrankaReachEnv"``: a
    registry imports it by name)."""
    path = module_file(name, root)
    if path is None:
        return set()
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ENTRY_POINT.fullmatch(node.value):
            found.add(node.value.split(":")[0])  # a string entry point: imported when the registry uses it
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return {m for m in found if module_file(m, root) is not None}


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@cache
def _closure(modules: tuple[str, ...], root: Path) -> tuple[str, ...]:
    seen: set[str] = set()
    todo = [p for m in modules for p in _with_parents(m)]
    while todo:
        m = todo.pop()
        if m in seen or module_file(m, root) is None:
            continue
        seen.add(m)
        todo.extend(p for i in imported_modules(m, root) for p in _with_parents(i))
    return tuple(sorted(seen))


def import_closure(*modules: str, root: Path = REPO) -> list[str]:
    """Module names of the transitive repository imports of ``modules`` (themselves and parent packages included)."""
    return list(_closure(tuple(sorted(modules)), Path(root)))


def closure_files(*modules: str, root: Path = REPO, data: Mapping[str, Iterable[str]] = DATA) -> list[str]:
    """Repository-relative paths (POSIX) of every file in the import closure of ``modules``: the modules' sources
    and the declared data files of the modules in it, sorted."""
    root = Path(root)
    files: set[str] = set()
    for m in import_closure(*modules, root=root):
        files.add((module_file(m, root) or Path()).relative_to(root).as_posix())
        for folder in data.get(m, ()):
            files.update(p.relative_to(root).as_posix() for p in (root / folder).rglob("*")
                         if p.is_file() and p.suffix in _DATA_SUFFIXES)
    return sorted(files)


def closure_deps(*modules: str, root: Path = REPO, data: Mapping[str, Iterable[str]] = DATA) -> list[str]:
    """The closure as DVC deps: source files, and each declared data folder once (not file by file)."""
    root = Path(root)
    deps: set[str] = set()
    for m in import_closure(*modules, root=root):
        deps.add((module_file(m, root) or Path()).relative_to(root).as_posix())
        deps.update(data.get(m, ()))
    return sorted(deps)


def hash_files(paths: Iterable[str], root: Path = REPO) -> str:
    """SHA-256 over (path, bytes) of ``paths`` (relative to ``root``; a leading ``src/`` dropped), sorted by path."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.removeprefix("src/").encode() + b"\0")  # the same key in a checkout and in a wheel
        h.update(hashlib.sha256((Path(root) / p).read_bytes()).digest())
    return h.hexdigest()


def code_key(*modules: str, root: Path = REPO, data: Mapping[str, Iterable[str]] = DATA) -> str:
    """The code key of ``modules``: the hash of their import closure's files (20 hex digits)."""
    return hash_files(closure_files(*modules, root=root, data=data), Path(root))[:20]


@cache
def cached_code_key(*modules: str) -> str:
    """:func:`code_key` of the checked-out repository, computed once per process."""
    return code_key(*modules)
