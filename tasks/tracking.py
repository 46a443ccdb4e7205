"""MLflow: the only module that talks to the tracking server / registry."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from embodied_safety.config import TrackingConfig


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
