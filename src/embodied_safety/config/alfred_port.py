"""The ``alfred_port`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.shared import ModelShape


@dataclass(frozen=True)
class AlfredPortConfig(ModelShape):
    """``alfred_port``: the SafetyALFRED port (SafeBranch B.6) on an offline corpus of turns.

    ``corpus``: a folder with ``train.json``, ``dev.json`` and ``test.json`` in the SafetyALFRED
    (LLaVA-style) format; empty: record them from the household splits named in ``record``. The
    embedded base actor (the model-shape fields) is trained on the train turns with
    ``drop_prob`` of the safety steps skipped, and to follow category hints."""

    corpus: str = ""
    record: dict[str, str] = dataclasses.field(default_factory=lambda: {
        "train": "train", "dev": "dev", "test": "test"})
    drop_prob: float = 0.9
    seed: int = 0
    base_sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 6, "per_device_train_batch_size": 32, "learning_rate": 2e-3,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.03, "max_length": 512, "logging_steps": 20})
    sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {  # SFT warm-up on chosen + replay
        "num_train_epochs": 6, "per_device_train_batch_size": 32, "learning_rate": 1e-3, "max_length": 512,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.05, "logging_steps": 10})
    branchpo: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 1e-4, "beta": 0.1,
        "max_length": 512, "logging_steps": 4})
    eval_every: dict[str, int] = dataclasses.field(default_factory=lambda: {"sft": 10, "branchpo": 4})
    # SFT replay as in the household stage: golden_replay = every gold train turn (the golden trajectories),
    # corrected_episodes = only the non-hazard train turns (the earlier mixture)
    sft_data: Literal["golden_replay", "corrected_episodes"] = "golden_replay"
    max_dev_sr_drop: float | None = 0.05  # selection floor: dev non-hazard accuracy >= the base's - this
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)
