"""Evaluation of a trained Dubins-VL / TurtleBot-Nav / Franka-Reach policy on the held-out episodes: the
deterministic policy on the seeds ``episode_seed(EVAL_BASE, i)`` per condition (in-distribution or an OOD
perturbation), with each episode's outcome for the intervals, and the exit rate of a Dubins-VL policy."""

from __future__ import annotations

from typing import Any

import numpy as np

EVAL_BASE = 3000  # evaluation seeds episode_seed(3000, i): disjoint from demos, BC evaluation and rollouts


def evaluate_conditions(env: str, policy: Any, episodes: int, conds: list[str],
                        base: int = EVAL_BASE) -> dict[str, dict[str, Any]]:
    """The deterministic policy on the held-out seeds ``episode_seed(base, i)`` (the stage's: ``EVAL_BASE``), per
    condition (``in`` or a perturbation): the summary metrics (floats) and ``per_episode`` (``{"sr": [...], "cost":
    [...]}`` in seed order, :func:`per_episode`), which the do-no-harm intervals resample (:func:`.report.do_no_harm`)."""
    from ..policy.demos import episode_seeds
    from ..policy.rollouts import collect_rollouts

    seeds = episode_seeds(base, range(episodes))
    out: dict[str, dict[str, Any]] = {}
    for cond in conds:
        pert = None if cond == "in" else cond
        if env == "dubins":
            from ...envs.control.dubins import DubinsVLVec

            rs = collect_rollouts(None, policy, seeds=seeds, deterministic=True, record_frames=False, n_envs=64,
                                  make_vec=lambda n, p=pert: DubinsVLVec(n, render=True, perturbation=p))
        else:
            import gymnasium as gym

            from ..envs import gym_id

            rs = collect_rollouts(lambda p=pert: gym.make(gym_id(env), perturbation=p), policy, seeds=seeds,
                                  deterministic=True, record_frames=False, n_envs=8)
        out[cond] = {**{k: float(v) for k, v in rs.summary().items()}, "per_episode": per_episode(rs)}
    return out


def per_episode(rs: Any) -> dict[str, list[float]]:
    """A :class:`~..policy.rollouts.RolloutSet`'s episodes in seed-list order: ``sr`` (1 = reached with no
    violation) and ``cost`` (summed) — what its summary's SR and CSC average, for intervals over the episodes."""
    import numpy as np

    sr = np.asarray(rs.episode_success, bool) & ~np.asarray(rs.episode_unsafe, bool)
    return {"sr": sr.astype(float).tolist(), "cost": [round(float(c), 6) for c in rs.episode_cost]}


def exit_summary(policy: Any, episodes: int, max_steps: int = 100) -> dict[str, float]:
    """The evaluator's summary of the deterministic policy plus ``exit_rate`` and ``exit_and_unsafe_rate``."""
    from ...envs.control.dubins import DubinsVLVec
    from ..policy.demos import episode_seeds
    from ..policy.rollouts import collect_rollouts
    from .exits import exit_mask

    rs = collect_rollouts(None, policy, seeds=episode_seeds(EVAL_BASE, range(episodes)), deterministic=True,
                          record_frames=False, n_envs=64, make_vec=lambda n: DubinsVLVec(n, render=True))
    exits = exit_mask(rs.episode_success, rs.episode_length, max_steps)
    return {**{k: float(v) for k, v in rs.summary().items()}, "exit_rate": float(exits.mean()),
            "exit_and_unsafe_rate": float((exits & np.asarray(rs.episode_unsafe, bool)).mean())}
