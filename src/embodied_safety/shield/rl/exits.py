"""Leaving the workspace (Dubins-VL): which episodes did, and the margin their last transition reaches.

An episode that neither reached the goal nor ran to the time limit ended by leaving ``[-1, 1]²``: the env ends
episodes early for no other reason. :func:`.evaluation.exit_summary` reports how often a policy does it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: the margin a transition that leaves the workspace reaches (``PPOConfig.exit_is_failure``)
EXIT_MARGIN = -1.0


def exit_mask(success: Any, length: Any, max_steps: int) -> np.ndarray:
    """Per episode: it ended before ``max_steps`` without success (Dubins-VL: the car left the workspace); the
    rule ``critic.replay_from_rollouts`` applies to its terminal transitions."""
    return ~np.asarray(success, bool) & (np.asarray(length) < max_steps)


def cap_exits(margin: Any, exited: Any) -> np.ndarray:
    """``margin`` with the entries where the car left the workspace capped at :data:`EXIT_MARGIN`: an exit is a
    failure to the safety critic (the PPO loop, the stage's warm-up replay and the state control all use this)."""
    margin = np.asarray(margin)
    return np.where(np.asarray(exited, bool), np.minimum(margin, EXIT_MARGIN), margin)
