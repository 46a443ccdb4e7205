"""Prefect task of the ``alfred_port`` stage: the port's training (:func:`embodied_safety.alfred.pipeline.train_port`)."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.alfred.corpus import Turn
from embodied_safety.alfred.pipeline import train_port
from embodied_safety.config.alfred_port import AlfredPortConfig


@task(name="alfred-train", cache_policy=NO_CACHE, log_prints=False)
def train_task(cfg: AlfredPortConfig, turns: dict[str, list[Turn]], models: Path) -> dict[str, object]:
    """Base actor, pairs, SFT -> BranchPO under ``models``; rows, funnel and training metrics."""
    return train_port(cfg, turns, models)
