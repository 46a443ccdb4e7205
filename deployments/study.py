"""Run a study recipe (`make study`, `make shield-study`, `make shield-ablations`) and commit-ready results.

A recipe (``studies/<name>.yaml``) names the ``params.yaml`` overrides of a study (``dvc exp run -S`` grammar, applied
by DVC's own function), the stages to reproduce and the files a reader needs::

    name: safebranch-study
    about: the full SafeBranch study ...
    budget: study                # the label of its tables
    seeds: [0, 1, 2]
    extends: [other.yaml]        # recipes whose overrides come first (optional)
    targets: []                  # `dvc repro` targets; none: the whole pipeline
    overrides: ["safebranch.seeds=[0,1,2]", ...]
    results: [models/safebranch_metrics.json, "reports/*.md", ...]   # globs, relative to the repository

    python deployments/study.py studies/safebranch.yaml [--dry-run] [--keep]

The study runs in a git worktree of this workspace (``.dvc/tmp/studies/<name>``) that shares the DVC cache, the
MLflow store and the content-keyed shard stores, so the workspace keeps the demo's outputs and ``dvc.lock``. A
killed study resumes when run again: finished stages come back from DVC's run-cache, finished runs and shards from
the stores. It ends by writing ``results/<name>/`` whole (a scratch folder, then a rename): the recipe's result
files under their repository paths, the study's ``dvc.lock`` and ``params.yaml``, and ``provenance.json`` (commit,
params digest, CPU model, budget, seeds, start and end). Keep results small (they are committed to git; the
models and rollouts stay in the DVC cache).
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from parallel_repro import _git, make_worktree, remove_worktree

from embodied_safety.io import replace_dir, scratch_dir, write_json
from embodied_safety.manifest import cpu_model

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / ".dvc" / "tmp" / "studies"
#: results/<name>/ larger than this is refused: it is committed to git
MAX_RESULT_BYTES = 2 * 1024 * 1024


def load_recipe(path: Path) -> dict[str, Any]:
    """The recipe with its ``extends`` resolved (their overrides first); names the file and field on bad input."""
    try:
        recipe = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"{path}: cannot read the recipe: {exc}") from exc
    if not isinstance(recipe, dict):
        raise SystemExit(f"{path}: a recipe is a mapping (name, overrides, results, ...)")
    for key, kind in (("name", str), ("overrides", list), ("results", list)):
        if not isinstance(recipe.get(key), kind):
            raise SystemExit(f"{path}: field {key!r} must be a {kind.__name__}")
    overrides: list[str] = []
    for parent in recipe.get("extends", []) or []:
        overrides += load_recipe(path.parent / parent)["overrides"]
    recipe["overrides"] = overrides + [str(o) for o in recipe["overrides"]]
    recipe.setdefault("targets", [])
    return recipe


def apply(params: Path, overrides: list[str]) -> None:
    """``overrides`` applied to ``params`` as ``dvc exp run -S`` applies them."""
    from dvc.utils.hydra import apply_overrides

    apply_overrides(params, overrides)


def provenance(recipe: dict[str, Any], recipe_path: Path, work: Path, start: float, end: float) -> dict[str, Any]:
    params = (work / "params.yaml").read_bytes()
    return {"study": recipe["name"], "recipe": str(recipe_path.relative_to(ROOT)) if recipe_path.is_relative_to(ROOT)
            else str(recipe_path), "command": f"python deployments/study.py {recipe_path.name}",
            "commit": _git("rev-parse", "HEAD", cwd=ROOT),
            "dirty": bool(_git("status", "--porcelain", "--untracked-files=no", cwd=ROOT)),
            "params_sha256": hashlib.sha256(params).hexdigest(), "overrides": recipe["overrides"],
            "budget": recipe.get("budget", ""), "seeds": recipe.get("seeds", []),
            "cpu": cpu_model(), "cores": os.cpu_count(), "threads_per_stage": os.environ.get("OMP_NUM_THREADS", "1"),
            "python": platform.python_version(),
            "start": dt.datetime.fromtimestamp(start, dt.UTC).isoformat(timespec="seconds"),
            "end": dt.datetime.fromtimestamp(end, dt.UTC).isoformat(timespec="seconds"),
            "wall_minutes": round((end - start) / 60, 1)}


def collect(recipe: dict[str, Any], recipe_path: Path, work: Path, start: float, end: float) -> Path:
    """``results/<name>/`` from the worktree's outputs, published whole."""
    final = ROOT / "results" / recipe["name"]
    tmp = scratch_dir(final)
    missing = []
    for pattern in recipe["results"]:
        hits = sorted(glob.glob(str(work / pattern), recursive=True))
        if not hits:
            missing.append(pattern)
        for hit in hits:
            rel = Path(hit).relative_to(work)
            if Path(hit).is_file():
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(hit, tmp / rel)
    for name in ("dvc.lock", "params.yaml"):
        shutil.copy2(work / name, tmp / name)
    prov = provenance(recipe, recipe_path, work, start, end) | {"missing_results": missing}
    write_json(tmp / "provenance.json", prov)
    size = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
    if size > MAX_RESULT_BYTES:
        shutil.rmtree(tmp)
        raise SystemExit(f"results/{recipe['name']}: {size / 1e6:.1f} MB is over the {MAX_RESULT_BYTES / 1e6:.0f} MB "
                         f"limit of a committed study: narrow the recipe's results list")
    return replace_dir(tmp, final)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="print the overridden params and stop")
    parser.add_argument("--keep", action="store_true", help="keep the worktree afterwards (to inspect outputs)")
    args = parser.parse_args(argv)
    recipe_path = args.recipe.resolve()
    recipe = load_recipe(recipe_path)
    work = STUDIES / recipe["name"]
    start = time.time()
    make_worktree(ROOT, work)
    apply(work / "params.yaml", recipe["overrides"])
    if args.dry_run:
        print((work / "params.yaml").read_text())
        remove_worktree(ROOT, work)
        return 0
    print(f"study {recipe['name']}: {len(recipe['overrides'])} overrides, worktree {work.relative_to(ROOT)}",
          flush=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(work / "deployments" / "demo.sh"), *recipe["targets"]], cwd=work, env=env)
    if done.returncode != 0:
        print(f"study {recipe['name']} failed (rc {done.returncode}); run the same command again to resume",
              file=sys.stderr)
        return done.returncode
    out = collect(recipe, recipe_path, work, start, time.time())
    if not args.keep:
        remove_worktree(ROOT, work)
    print(f"study {recipe['name']}: results in {out.relative_to(ROOT)} ({json.dumps(recipe.get('seeds', []))} seeds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
