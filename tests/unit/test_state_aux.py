"""The critic's keypoint encoder and the warm-up's pose regression (shield/rl/state_aux.py, critic.py, runs.pose_aux)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embodied_safety.envs.control.dubins import DubinsVLEnv, render_states
from embodied_safety.shield.policy.keypoints import KeypointImageEncoder
from embodied_safety.shield.policy.visuomotor import ImageEncoder, policy_for_env
from embodied_safety.shield.rl.critic import CriticConfig, SafetyCritic, load_critic, transition_frames
from embodied_safety.shield.rl.state_aux import PoseAux, jittered_states, pose_targets
from embodied_safety.shield.rl.viability import frame_states, state_margins
from tests.helpers import dubins_rollouts


def test_pose_targets_are_the_heading_on_the_unit_circle_and_the_position() -> None:
    s = np.array([[0.5, -0.25, np.pi / 2, 0, 0, 0, 0], [-0.1, 0.2, -np.pi, 0, 0, 0, 0]])
    np.testing.assert_allclose(pose_targets(s).numpy(), [[0, 1, 0.5, -0.25], [-1, 0, -0.1, 0.2]], atol=1e-6)


def test_jittered_states_stay_in_the_workspace_keep_the_scene_and_favour_near_frames() -> None:
    rng = np.random.default_rng(3)
    n = 200
    states = np.column_stack([rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-np.pi, np.pi, n),
                              np.tile([0.7, 0.7, 0.9, -0.9], (n, 1))])  # goal (0.7, 0.7), obstacle in a corner
    pool = np.arange(0, n, 2)
    extra, src = jittered_states(states, pool, 1000, seed=0)
    assert extra.shape == (1000, 7) and np.isin(src, pool).all()
    assert np.abs(extra[:, :2]).max() <= 0.98
    np.testing.assert_array_equal(extra[:, 3:], states[src, 3:])  # goal and obstacle are the source frame's
    assert np.median(np.abs(extra[:, 2] - states[src, 2])) > 0.1  # the heading moved
    near = state_margins(states[pool]) <= 0.5
    # half of the draws come from near frames, so they are over-represented against the pool
    assert np.mean(state_margins(states[src]) <= 0.5) > near.mean() + 0.1
    again, src2 = jittered_states(states, pool, 1000, seed=0)
    np.testing.assert_array_equal(again, extra)
    np.testing.assert_array_equal(src2, src)
    empty, none = jittered_states(states, pool, 0, seed=0)
    assert empty.shape == (0, 7) and none.size == 0
    with pytest.raises(ValueError, match="empty"):
        jittered_states(states, np.array([], dtype=int), 5, seed=0)


def test_transition_frames_skip_each_episodes_last_frame() -> None:
    np.testing.assert_array_equal(transition_frames(np.array([0, 0, 0, 1, 1, 2, 3, 3])), [0, 1, 3, 6])


def test_a_keypoint_critic_has_its_own_image_encoder_and_saves(tmp_path) -> None:
    policy = policy_for_env(DubinsVLEnv())
    cfg = CriticConfig(hidden=(8,), encoder="keypoints")
    critic = SafetyCritic.from_policy(policy, cfg)
    assert isinstance(critic.encoder.image, KeypointImageEncoder)
    assert isinstance(policy.encoder.image, ImageEncoder) and not isinstance(policy.encoder.image, KeypointImageEncoder)
    # the instruction encoder is a copy of the policy's
    for a, b in zip(critic.encoder.text.parameters(), policy.encoder.text.parameters(), strict=True):
        assert torch.equal(a, b) and a is not b
    frames = torch.as_tensor(render_states(np.array([[0.1, 0.2, 0.3, 0.7, 0.7, 0.0, 0.0]] * 2)))
    q = critic(frames, ["go", "go"], torch.zeros(2, 1))
    critic.save(tmp_path / "c")
    again = load_critic(tmp_path / "c", policy.config)
    assert isinstance(again.encoder.image, KeypointImageEncoder)
    assert torch.allclose(again(frames, ["go", "go"], torch.zeros(2, 1)), q)
    with pytest.raises(ValueError, match="encoder"):
        CriticConfig(encoder="resnet")  # type: ignore[arg-type]


def test_pose_aux_needs_one_target_per_frame_and_adds_its_pool_batch() -> None:
    feats = torch.zeros(3, 5)
    with pytest.raises(ValueError, match="2 frames, 1 instructions"):
        PoseAux(5, 1.0, torch.zeros(2, 4, 4, 3, dtype=torch.uint8), ["a"], torch.zeros(2, 4))
    calls: list[int] = []

    def encoder(images: torch.Tensor, instructions: list[str]) -> torch.Tensor:
        calls.append(len(images))
        return torch.zeros(len(images), 5)

    aux = PoseAux(5, 2.0, torch.zeros(10, 4, 4, 3, dtype=torch.uint8), ["a"] * 10, torch.zeros(10, 4), batch=4)
    loss = aux.loss(encoder, feats, torch.zeros(3, 4))
    assert calls == [4] and loss.shape == ()
    none = PoseAux(5, 2.0, torch.zeros(0, 4, 4, 3, dtype=torch.uint8), [], torch.zeros(0, 4))
    torch.testing.assert_close(none.loss(encoder, feats, torch.zeros(3, 4)), 2.0 * none.error(feats, torch.zeros(3, 4)))
    assert calls == [4]  # an empty pool adds no batch


@pytest.fixture(scope="module")
def rollouts():
    return dubins_rollouts(4, 3, 3)


def test_the_warm_up_pose_regression_learns_the_heading_of_the_replay_frames(rollouts) -> None:
    """A keypoint critic warmed with the pose regression reads the heading of its replay frames better than the
    same warm-up without it (same seed, same batches): the auxiliary loss reaches the encoder."""
    from embodied_safety.shield.rl.runs import pose_aux, warm_start_critic

    policy = policy_for_env(DubinsVLEnv())
    ell = np.asarray(rollouts.margin)
    states = frame_states(rollouts)
    frames = torch.as_tensor(np.asarray(rollouts.frames))
    words = rollouts.frame_instructions()
    errors = {}
    for weight in (0.0, 1.0):
        torch.manual_seed(0)
        cfg = CriticConfig(hidden=(16,), batch_size=32, lr=1e-3, encoder="keypoints", pose_aux=weight,
                           pose_aux_states=64 if weight else 0)
        critic, extra = warm_start_critic("dubins", policy, rollouts, ell, cfg, {"regress": 40, "td": 10})
        assert extra["transitions"] == len(transition_frames(np.asarray(rollouts.frame_episode)))
        # a fresh pose head on the warm encoder's frozen features: how well the heading can be read off them
        torch.manual_seed(1)
        with torch.no_grad():
            f = critic.embed(frames, words)
        probe = PoseAux(critic.feature_dim, 1.0, frames[:0], [], torch.zeros(0, 4), lr=1e-2)
        y = pose_targets(states)
        for _ in range(300):
            err = probe.error(f, y)
            err.backward()
            probe.step()
        with torch.no_grad():
            errors[weight] = float(probe.error(f, y))
    print(errors)
    assert errors[1.0] < 0.8 * errors[0.0], errors
    with pytest.raises(ValueError, match="Dubins-VL only"):
        pose_aux("turtlebot", SafetyCritic.from_policy(policy, CriticConfig(pose_aux=1.0)), rollouts, 1, {})
    with pytest.raises(ValueError, match="branch"):
        pose_aux("dubins", SafetyCritic.from_policy(policy, CriticConfig(pose_aux=1.0)), rollouts, 1,
                 {"branch_steps": 2})
