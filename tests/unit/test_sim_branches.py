"""Simulator branches for the Dubins-VL critic's warm-up replay (shield/rl/sim_branches.py) and the renderer of
arbitrary states they use (envs/control/dubins.render_states)."""

from __future__ import annotations

import numpy as np
import pytest

from embodied_safety.envs.control.dubins import U_MAX, DubinsVLEnv, DubinsVLVec, V, render_states
from embodied_safety.shield.rl.critic import replay_from_rollouts
from embodied_safety.shield.rl.exits import EXIT_MARGIN
from embodied_safety.shield.rl.sim_branches import branched_replay, branches
from embodied_safety.shield.rl.viability import frame_states
from tests.helpers import dubins_rollouts


def test_render_states_draws_the_frames_the_env_shows() -> None:
    env = DubinsVLVec(4, render=True, seed=11)
    obs, info = env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, *_, info = env.step(rng.uniform(-U_MAX, U_MAX, (4, 1)))
    np.testing.assert_array_equal(render_states(info["state"]), obs["image"])
    # chunking does not change a pixel
    np.testing.assert_array_equal(render_states(info["state"], chunk=3), obs["image"])


def test_branches_hold_each_rate_until_the_car_leaves_the_workspace() -> None:
    mid = [0.0, 0.0, 0.0, -0.8, 0.8, -0.5, -0.5]    # heading right from the centre: 3 steps stay inside
    edge = [0.95, 0.0, 0.0, -0.8, 0.8, -0.5, -0.5]  # heading right 0.05 from the edge: the first step leaves
    b = branches(np.array([mid, edge]), np.array([-U_MAX, 0.0, U_MAX]), exit_is_failure=True, steps=3)
    straight = (b["origin"] == 0) & (b["action"][:, 0] == 0.0)
    assert straight.sum() == 3  # three steps of the straight branch from the centre
    np.testing.assert_allclose(b["next_image"][straight][:, 0], [V * 0.1, 2 * V * 0.1, 3 * V * 0.1], atol=1e-5)
    from_edge = b["origin"] == 1
    # every branch from the edge leaves on its first step: one transition each, terminal, exit-capped
    assert from_edge.sum() == 3 and np.all(b["terminated"][from_edge] == 1.0) and np.all(b["exited"][from_edge] == 1.0)
    assert np.all(b["next_margin"][from_edge] <= EXIT_MARGIN)
    # the left and right turns from the centre are mirror images across the heading
    left = (b["origin"] == 0) & (b["action"][:, 0] > 0)
    right = (b["origin"] == 0) & (b["action"][:, 0] < 0)
    np.testing.assert_allclose(b["next_image"][left][:, 1], -b["next_image"][right][:, 1], atol=1e-6)
    uncapped = branches(np.array([edge]), np.array([0.0]), exit_is_failure=False)
    assert uncapped["next_margin"][0] > EXIT_MARGIN


@pytest.fixture(scope="module")
def rollouts():
    return dubins_rollouts(3, 4, 2)


def test_branched_replay_keeps_the_rollouts_and_scores_the_branch_frames_with_the_source(rollouts) -> None:
    seen: list[int] = []

    def source(frames: np.ndarray, margin: np.ndarray, cost: np.ndarray) -> np.ndarray:
        """A margin source that reads the frame: ℓ shifted by the frame's mean pixel, so a mixed-up frame shows."""
        seen.append(len(frames))
        return margin + frames.reshape(len(frames), -1).mean(axis=1) / 1000.0

    ell = source(np.asarray(rollouts.frames), np.asarray(rollouts.margin), np.asarray(rollouts.cost))
    base = replay_from_rollouts(rollouts, ell, 100, exit_margin=EXIT_MARGIN)
    buf = branched_replay(rollouts, ell, source, 100, steps=2, every=4, exit_margin=EXIT_MARGIN)
    n = base.size
    for k in ("image", "action", "margin", "next_image", "next_margin", "terminated"):
        np.testing.assert_array_equal(getattr(buf, k)[:n], getattr(base, k)[:n])
    states = frame_states(rollouts)
    picked = len(range(0, len(states), 4))
    extra = buf.size - n
    assert 3 * picked <= extra <= 3 * 2 * picked
    # a branch's first frame is the rollout frame it starts from, with the rollout frame's margin
    first = buf.image[n:n + 3]
    np.testing.assert_array_equal(first[0], np.asarray(rollouts.frames)[0])
    np.testing.assert_allclose(buf.margin[n:n + 3], ell[0], atol=1e-5)
    # every branch frame's margin is the source on that frame and its simulator margin
    b = branches(states[::4], np.array([-U_MAX, 0.0, U_MAX]), exit_is_failure=True, steps=2)
    want = source(render_states(b["next_image"]), b["next_margin"].astype(np.float64), b["next_margin"] < 0)
    want = np.where(b["exited"] > 0, np.minimum(want, EXIT_MARGIN), want)
    np.testing.assert_allclose(buf.next_margin[n:buf.size], want, atol=1e-5)
    assert buf.instructions(np.arange(n, buf.size))[0] == rollouts.frame_instructions()[0]
    assert sum(seen) >= 2 * extra


def test_the_warmup_switch_is_checked_and_needs_the_margin_source(rollouts) -> None:
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.policy.visuomotor import policy_for_env
    from embodied_safety.shield.rl.critic import CriticConfig
    from embodied_safety.shield.rl.runs import warm_start_critic

    with pytest.raises(ValueError, match="unknown: \\['branch_step'\\]"):
        ShieldPPOConfig(warmup={"regress": 1, "td": 1, "branch_step": 2})
    policy = policy_for_env(DubinsVLEnv())
    ell = np.asarray(rollouts.margin)
    with pytest.raises(ValueError, match="margin source"):
        warm_start_critic("dubins", policy, rollouts, ell, CriticConfig(hidden=(8,)),
                          {"regress": 1, "td": 1, "branch_steps": 1})
    critic, extra = warm_start_critic("dubins", policy, rollouts, ell, CriticConfig(hidden=(8,)),
                                      {"regress": 1, "td": 1, "branch_steps": 1, "branch_every": 8},
                                      source=lambda frames, margin, cost: margin)
    ep = np.asarray(rollouts.frame_episode)
    assert extra["transitions"] > int(np.sum(ep[1:] == ep[:-1]))  # the branches are in the replay it trained on
