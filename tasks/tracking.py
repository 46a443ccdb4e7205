"""MLflow: the only module that talks to the tracking server / registry."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from embodied_safety.config import ActorConfig, TrackingConfig


def tracking_config(overrides: dict[str, str] | None = None) -> TrackingConfig:
    return dataclasses.replace(TrackingConfig(), **(overrides or {}))


@contextlib.contextmanager
def mlflow_run(cfg: TrackingConfig, run_name: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
    """Start a run in ``cfg.experiment`` (artifacts under an absolute ``artifact_root``)."""
    import mlflow

    mlflow.set_tracking_uri(cfg.tracking_uri)
    exp = mlflow.get_experiment_by_name(cfg.experiment)
    if exp is None:
        mlflow.create_experiment(cfg.experiment, artifact_location=Path(cfg.artifact_root).resolve().as_uri())
    mlflow.set_experiment(cfg.experiment)
    with mlflow.start_run(run_name=run_name) as run:
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
