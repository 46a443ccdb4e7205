"""What the Dubins-VL critic experiments share: the BC policy, its rollout frames with their replayed simulator states,
the stage's critic config, and a held-out fifth of the episodes. Run from a clone with ``data/shield/rollouts``."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass
class DubinsFrames:
    policy: Any
    rollouts: Any
    states: np.ndarray  # [N, 7] simulator states of the frames (viability.frame_states)
    frames: Any  # uint8 tensor [N, 84, 84, 3]
    words: list[str]
    critic_config: Any  # the stage's Dubins-VL critic config (the ground-truth-margin run's), encoder frozen or not
    test: np.ndarray  # mask of the frames of the held-out episodes


def load(seed: int, frozen: bool = False) -> DubinsFrames:
    """Pins the stage's threads, loads everything and draws the held-out fifth of the episodes from ``seed``."""
    import torch

    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.policy.rollouts import RolloutSet
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import ppo_config
    from embodied_safety.shield.rl.viability import frame_states
    from embodied_safety.threads import pin_stage_threads
    from flows._shield import BC, ROLLOUTS

    pin_stage_threads()
    rollouts = RolloutSet.load(ROLLOUTS / "dubins" / "rollouts.npz")
    ccfg = dataclasses.replace(ppo_config(load_params("shield_ppo", ShieldPPOConfig), "dubins", "gated_gt", 0).critic,
                               freeze_encoder=frozen)
    ep = np.asarray(rollouts.frame_episode)
    rng = np.random.default_rng(seed)
    test = np.isin(ep, rng.choice(ep.max() + 1, size=(ep.max() + 1) // 5, replace=False))
    return DubinsFrames(load_policy(BC / "dubins"), rollouts, frame_states(rollouts),
                        torch.as_tensor(np.asarray(rollouts.frames)), rollouts.frame_instructions(), ccfg, test)
