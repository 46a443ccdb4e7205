"""The ``safebranch`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

VARIANTS = ("sft_only", "golden_replay_only", "branchpo_only", "safebranch", "trajectory_dpo", "trajectory_dpo_success_matched",
            "sft_only_fb", "branchpo_only_fb", "safebranch_fb", "safebranch_extracted", "safebranch_judged")


@dataclass(frozen=True)
class SafeBranchConfig:
    """``safebranch``: the Table 2 / 4 / 13 variants over seeds (SafeBranch §4.1-4.2, App. F, Table 5).

    ``sft`` / ``branchpo`` / ``trajectory_dpo`` hold TRL field names (``SFTConfig`` / ``DPOConfig``).
    ``sweep`` lists learning rates per sweep key (``sft``, ``branchpo`` via SafeBranch, ``branchpo_only``,
    ``trajectory_dpo``): the first seed trains each, the dev split picks one by (SSR, SR), and every
    variant then uses its picks (App. F.5: selection by rollouts, never by reward accuracy). A
    missing key keeps params' rate.
    """

    seeds: tuple[int, ...] = (0, 1, 2)
    variants: tuple[str, ...] = VARIANTS
    peft: dict[str, Any] | None = dataclasses.field(default_factory=lambda: {"r": 16, "lora_alpha": 32,
                                                                              "lora_dropout": 0.05})
    sft: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 9, "per_device_train_batch_size": 32, "learning_rate": 1e-3, "lr_scheduler_type": "cosine",
        "warmup_steps": 0.05, "max_length": 512, "logging_steps": 20})
    branchpo: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 1e-5, "beta": 0.1,
        "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 1.0], "max_length": 512, "logging_steps": 10})
    trajectory_dpo: dict[str, Any] = dataclasses.field(default_factory=lambda: {
        "num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 1e-5, "beta": 0.1,
        "max_length": 512, "logging_steps": 10})
    sweep: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=lambda: {
        "sft": (3e-4, 1e-3, 3e-3), "branchpo": (1e-5, 1e-4, 1e-3), "branchpo_only": (1e-5, 1e-4, 1e-3),
        "trajectory_dpo": (1e-5, 1e-4, 1e-3)})
    dev_split: str = "dev"
    eval_every: dict[str, int] = dataclasses.field(default_factory=lambda: {  # optimizer steps between dev-split
        "sft": 20, "branchpo": 4, "trajectory_dpo": 4})                    # evaluations per phase (F.5)
    max_dev_evals: int = 12  # cap per phase: larger data sets are evaluated every steps / max_dev_evals steps
    eval_splits: tuple[str, ...] = ("test", "ood_objectshift", "ood_taskshift")
    registered_model: str = "actor"
    # SFT replay (D.5): golden_replay = the golden plan of every train task; corrected_episodes = the critic-
    # corrected episodes that ended safe and successful (the earlier default)
    sft_data: str = "golden_replay"
    # copies of each train task with 1-2 neutral extra objects in the golden replay (the bootstrap actor's
    # augmentation, same seed: envs/household/suite/augment.py), so SFT keeps the base's OOD object binding
    replay_extra_objects: int = 0
    # extra cue-free BranchPO pairs (branch.golden): after_repair (next plan action / DONE() over a repeat of
    # the safety action), contrast (a contrast task's plan step over the safety step it makes unnecessary)
    branchpo_pairs: tuple[str, ...] = ("after_repair", "contrast")
    train_split: str = "train"  # the tasks the golden replay and the contrast pairs come from
    max_dev_sr_drop: float | None = 0.05  # selection: max dev SSR s.t. dev SR >= base dev SR - this (None: off)
    paired_bootstrap: int = 10000  # resamples of the per-task paired comparisons (0: none)
    # a label in results.json and every report table: demo = make demo's budget, study = make study's (issue 19)
    scale: Literal["demo", "study"] = "demo"
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)  # overrides of TrackingConfig

    def __post_init__(self) -> None:
        if self.sft_data not in ("golden_replay", "corrected_episodes"):
            raise ValueError(f"safebranch.sft_data: {self.sft_data!r}; known: golden_replay, corrected_episodes")
        bad_pairs = set(self.branchpo_pairs) - {"after_repair", "contrast"}
        if bad_pairs:
            raise ValueError(f"safebranch.branchpo_pairs: unknown {sorted(bad_pairs)}; known: after_repair, contrast")
        unknown = set(self.variants) - set(VARIANTS)
        if unknown:
            raise ValueError(f"safebranch.variants: unknown {sorted(unknown)}; known: {list(VARIANTS)}")
        bad = set(self.sweep) - {"sft", "branchpo", "branchpo_only", "trajectory_dpo"}
        if bad:
            raise ValueError(f"safebranch.sweep: unknown key(s) {sorted(bad)}; known: sft, branchpo, branchpo_only, "
                             "trajectory_dpo")
        try:  # YAML 1.1 reads `1e-5` (no dot) as a string; `dvc exp run -S` writes rates that way
            rates = {k: tuple(float(x) for x in v) for k, v in self.sweep.items()}
        except (TypeError, ValueError) as e:
            raise ValueError(f"safebranch.sweep: learning rates must be numbers: {e}") from e
        object.__setattr__(self, "sweep", rates)
