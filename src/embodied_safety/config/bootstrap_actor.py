"""The ``bootstrap_actor`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.shared import ModelShape


@dataclass(frozen=True)
class BootstrapActorConfig(ModelShape):
    """``bootstrap_actor``: train the embedded default actor from scratch (see actors/bootstrap.py);
    the model-shape fields are inherited from :class:`ModelShape`."""

    drop_prob: float = 0.9  # probability of dropping each safety step from a training plan
    patterns: int = 2  # sampled drop masks per train task
    renamed_fraction: float = 0.0  # share of examples that also get a renamed-objects copy (see bootstrap_data)
    recovery: bool = False  # add failure-recovery examples
    # train-time task augmentation (envs/household/suite/augment.py); the pools exclude every OOD category
    augment_extra_objects: int = 0  # copies per train task with 1..augment_extra_max neutral extra objects
    augment_extra_max: int = 2
    augment_rename_targets: int = 0  # copies per train task whose target is another same-ability category
    # proxy names (actors/proxy.py): the profile stores the training lexicon; an object word the actor never wrote
    # is shown as a trained word with the same catalog abilities. ``ood_splits`` are evaluated with and without.
    proxy_names: bool = False
    ood_splits: tuple[str, ...] = ()
    seed: int = 0
    observation: Literal["full", "partial"] = "full"
    sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 6, "per_device_train_batch_size": 32, "learning_rate": 2e-3,
        "lr_scheduler_type": "cosine", "warmup_steps": 0.03, "max_length": 512, "logging_steps": 20})
    eval_split: str = "test"
    min_sr: float = 0.6  # thresholds the stage reports as pass/fail (issue 3)
    max_ssr: float = 0.15
    min_feedback_following: float = 0.8
    register_as: str = "actor-base"
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)  # overrides of TrackingConfig
