"""MLflow: the only module that talks to the tracking server / registry.

Artifacts stay with the checkout: with a relative ``artifact_root`` (the default ``mlartifacts``) and a
sqlite tracking URI (the default ``sqlite:///mlruns.db``, relative too), the experiment's artifact location
is stored *relative* (``mlartifacts``), so every run's ``artifact_uri`` and every model version's source
are ``mlartifacts/<run>/artifacts/...``, resolved against the working directory (the project root: DVC
stages, Prefect deployments and ``make server`` all run there). A moved or copied checkout keeps its
runs, artifacts and registry. MLflow itself always stores absolute paths, so the helper rewrites the row
after creating the experiment, and :func:`relocate` turns the absolute paths of an older store into
relative ones (``python -m tasks.tracking relocate``; ``make server`` runs it).

Telemetry: MLflow reads only ``MLFLOW_DISABLE_TELEMETRY`` (``DO_NOT_TRACK`` does not turn it off); it is
set here for every process that imports this module, as well as in the Makefile, services.sh and .ci/run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from embodied_safety.config.shared import ActorConfig, TrackingConfig

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

#: opens in the UI's "Model training" view (MLflow 3 opens an untagged experiment in its GenAI view)
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
#: (table, column) pairs holding artifact paths, rewritten by :func:`relocate`
ARTIFACT_COLUMNS = (("experiments", "artifact_location"), ("runs", "artifact_uri"), ("model_versions", "source"),
                    ("model_versions", "storage_location"), ("logged_models", "artifact_location"))


def tracking_config(overrides: dict[str, str] | None = None) -> TrackingConfig:
    return dataclasses.replace(TrackingConfig(), **(overrides or {}))


def _sqlite_path(tracking_uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (relative or absolute), else None."""
    return Path(tracking_uri.removeprefix("sqlite:///")) if tracking_uri.startswith("sqlite:///") else None


def _relative_root(cfg: TrackingConfig) -> str | None:
    """``cfg.artifact_root`` when artifacts can be stored relative (a relative root, a sqlite store)."""
    root = cfg.artifact_root
    if _sqlite_path(cfg.tracking_uri) is None or "://" in root or Path(root).is_absolute():
        return None
    return Path(root).as_posix()


def relocate(cfg: TrackingConfig) -> int:
    """Rewrite absolute artifact paths ``[file://]/any/where/<root>/...`` in the sqlite store to ``<root>/...``
    where that loses nothing (the path is under this checkout's ``<root>``, or it is gone: a moved checkout).

    For a store written before artifact paths were relative, or copied from another checkout. Returns the
    number of rows changed; a no-op for a non-sqlite URI, an absolute ``artifact_root`` or a missing store.
    """
    root, db = _relative_root(cfg), _sqlite_path(cfg.tracking_uri)
    if root is None or db is None or not db.is_file():
        return 0
    pattern = re.compile(rf"^(?:file://)?/(?:.*/)?{re.escape(root)}(/.*)?$")
    changed = 0
    con = sqlite3.connect(db, timeout=60)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        with con:
            for table, column in ARTIFACT_COLUMNS:
                if table not in tables:
                    continue
                rows = con.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} LIKE ?",  # noqa: S608
                                   (f"%/{root}%",)).fetchall()
                for rowid, value in rows:
                    m = pattern.match(value or "")
                    if m and _same_or_gone(value, root + (m.group(1) or "")):
                        con.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?",  # noqa: S608
                                    (root + (m.group(1) or ""), rowid))
                        changed += 1
    finally:
        con.close()
    return changed


def _same_or_gone(absolute: str, relative: str) -> bool:
    """Rewrite only where nothing is lost: the path is this checkout's own, or it no longer exists."""
    path = Path(absolute.removeprefix("file://"))
    return path == Path(relative).resolve() or not path.exists()


def ensure_experiment(cfg: TrackingConfig) -> str:
    """The id of ``cfg.experiment``, created on first use with a relative artifact location where possible
    (module docstring) and tagged to open in the UI's "Model training" view."""
    import mlflow

    mlflow.set_tracking_uri(cfg.tracking_uri)
    exp = mlflow.get_experiment_by_name(cfg.experiment)
    if exp is not None:
        if not all(exp.tags.get(k) for k in EXPERIMENT_KIND):  # an experiment made before the tag
            for k, v in EXPERIMENT_KIND.items():
                mlflow.MlflowClient(cfg.tracking_uri).set_experiment_tag(exp.experiment_id, k, v)
        return str(exp.experiment_id)
    root = _relative_root(cfg)
    location = Path(cfg.artifact_root).resolve().as_uri()
    try:
        exp_id = mlflow.create_experiment(cfg.experiment, artifact_location=location, tags=EXPERIMENT_KIND)
    except mlflow.exceptions.MlflowException:  # created meanwhile by a parallel stage
        exp = mlflow.get_experiment_by_name(cfg.experiment)
        if exp is None:
            raise
        return str(exp.experiment_id)
    if root is not None:
        db = _sqlite_path(cfg.tracking_uri)
        con = sqlite3.connect(db, timeout=60)  # type: ignore[arg-type]
        try:
            with con:
                con.execute("UPDATE experiments SET artifact_location = ? WHERE experiment_id = ?", (root, int(exp_id)))
        finally:
            con.close()
    return str(exp_id)


@contextlib.contextmanager
def mlflow_run(cfg: TrackingConfig, run_name: str, params: dict[str, Any] | None = None,
               system_metrics: bool | None = True) -> Iterator[Any]:
    """Start a run in ``cfg.experiment``; the run's clock starts here, so open it *before* training.

    ``system_metrics``: MLflow's CPU / memory / disk (and GPU, with pynvml) sampling for the run's life
    (every 10 s; a shorter run logs none); None leaves it to ``MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING``.
    """
    import mlflow

    if _relative_root(cfg) is not None:
        relocate(cfg)
    mlflow.set_experiment(experiment_id=ensure_experiment(cfg))
    if system_metrics is not None and os.environ.get("MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING"):
        system_metrics = None  # the variable wins
    from embodied_safety.manifest import cpu_model, git_sha

    # provenance lives in the run, not in the stages' hashed outputs (manifests carry the code key instead); the CPU
    # model because trained outputs differ between CPU families (an Intel and an AMD lock differ)
    with mlflow.start_run(run_name=run_name, log_system_metrics=system_metrics,
                          tags={"git_commit": git_sha() or "unknown", "cpu_model": cpu_model()}) as run:
        if params:
            mlflow.log_params({k: str(v)[:500] for k, v in _flatten(params).items()})
        yield run


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, f"{key}."))
        else:
            out[key] = v
    return out


def log_metrics(metrics: dict[str, Any], step: int | None = None) -> None:
    import mlflow

    mlflow.log_metrics({k: float(v) for k, v in metrics.items()
                        if isinstance(v, int | float) and not isinstance(v, bool)}, step=step)


def register_model_dir(name: str, local_dir: str | Path, artifact_path: str = "model",
                       tags: dict[str, str] | None = None) -> str:
    """Log a plain HF/PEFT model dir and register it as a new version of ``name`` (FIELD_NOTES part 2 §5, B1).

    ``mlflow.artifacts.download_artifacts("models:/<name>@<alias>")`` then returns the dir itself.
    """
    import mlflow
    from mlflow import MlflowClient

    mlflow.log_artifacts(str(local_dir), artifact_path)
    run = mlflow.active_run()
    client = MlflowClient()
    with contextlib.suppress(Exception):
        client.create_registered_model(name)
    mv = client.create_model_version(name, source=f"{run.info.artifact_uri}/{artifact_path}", run_id=run.info.run_id,
                                      tags=tags or {})
    return str(mv.version)


def log_artifacts(paths: list[Path], artifact_path: str | None = None) -> None:
    """Log files that exist (tables, plots) to the active run."""
    import mlflow

    for p in paths:
        if Path(p).is_file():
            mlflow.log_artifact(str(p), artifact_path)


def registry(cfg: TrackingConfig) -> Any:
    """An ``MlflowClient`` on ``cfg``'s tracking URI (the registry lives in the same store)."""
    import mlflow
    from mlflow import MlflowClient

    mlflow.set_tracking_uri(cfg.tracking_uri)
    return MlflowClient(cfg.tracking_uri)


def alias_version(client: Any, name: str, alias: str) -> Any | None:
    """The model version an alias points at, or None when the alias (or the model) does not exist."""
    from mlflow.exceptions import MlflowException

    try:
        return client.get_model_version_by_alias(name, alias)
    except MlflowException:
        return None


def resolve_model_uri(uri: str, cfg: TrackingConfig, cache_root: str | Path = ".cache/registry") -> Path:
    """``models:/<name>@<alias>`` or ``models:/<name>/<version>`` -> a local model dir (downloaded once per version)."""
    import mlflow

    client = registry(cfg)
    ref = uri.removeprefix("models:/")
    if "@" in ref:
        name, alias = ref.split("@", 1)
        mv = alias_version(client, name, alias)
        if mv is None:
            raise ValueError(f"{uri}: registered model {name!r} has no alias {alias!r} in {cfg.tracking_uri}")
    else:
        name, version = ref.rsplit("/", 1)
        mv = client.get_model_version(name, version)
    dst = Path(cache_root) / name / str(mv.version)
    if not (dst / "config.json").is_file():  # download into a scratch dir, then one rename
        import shutil

        tmp = dst.parent / f".{dst.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        mlflow.artifacts.download_artifacts(artifact_uri=f"models:/{name}/{mv.version}", dst_path=str(tmp))
        shutil.rmtree(dst, ignore_errors=True)
        tmp.rename(dst)
    return dst


def resolve_actor(actor: ActorConfig, cfg: TrackingConfig | None = None) -> ActorConfig:
    """An hf actor named by a registry URI (``models:/actor@champion``) -> the same config on its local dir."""
    if actor.backend == "hf" and actor.model.startswith("models:/"):
        return dataclasses.replace(actor, model=str(resolve_model_uri(actor.model, cfg or TrackingConfig())))
    return actor


def main(argv: list[str] | None = None) -> None:
    """``python -m tasks.tracking relocate``: make the default store's artifact paths relative (see above) and
    tag its experiment for the "Model training" view."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["relocate"]:
        sys.exit("usage: python -m tasks.tracking relocate")
    cfg = tracking_config()
    print(f"{cfg.tracking_uri}: {relocate(cfg)} artifact path(s) made relative to {cfg.artifact_root}/")
    if _sqlite_path(cfg.tracking_uri) and _sqlite_path(cfg.tracking_uri).is_file():  # type: ignore[union-attr]
        ensure_experiment(cfg)  # tags an older experiment for the "Model training" view


if __name__ == "__main__":
    main()
