"""How often a Dubins-VL policy leaves the workspace (docs/shield_ppo.md).

An episode that neither reached the goal nor ran to the time limit ended by leaving ``[-1, 1]²``: the env ends
episodes early for no other reason. The stage's evaluator (:func:`.runs.evaluate_conditions`) reports SR, reach,
violations and CSC; this adds the exit rate, on the same held-out seeds.

    python -m embodied_safety.shield.rl.exits models/shield/bc/dubins models/shield/ppo/dubins/policy [--episodes 100]
"""

from __future__ import annotations

import argparse
import json
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


def exit_summary(policy: Any, episodes: int, max_steps: int = 100) -> dict[str, float]:
    """The evaluator's summary of the deterministic policy plus ``exit_rate`` and ``exit_and_unsafe_rate``."""
    from ...envs.control.dubins import DubinsVLVec
    from ..policy.demos import episode_seeds
    from ..policy.rollouts import collect_rollouts
    from .runs import EVAL_BASE

    rs = collect_rollouts(None, policy, seeds=episode_seeds(EVAL_BASE, range(episodes)), deterministic=True,
                          record_frames=False, n_envs=64, make_vec=lambda n: DubinsVLVec(n, render=True))
    exits = exit_mask(rs.episode_success, rs.episode_length, max_steps)
    return {**{k: float(v) for k, v in rs.summary().items()}, "exit_rate": float(exits.mean()),
            "exit_and_unsafe_rate": float((exits & np.asarray(rs.episode_unsafe, bool)).mean())}


def main() -> None:
    from ..policy.visuomotor import load_policy

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policies", nargs="+", help="saved policy folders (config.json + model.safetensors)")
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    for path in args.policies:
        print(path, json.dumps({k: round(v, 4) for k, v in exit_summary(load_policy(path), args.episodes).items()}))


if __name__ == "__main__":
    main()
