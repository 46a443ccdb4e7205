"""The simulator's references for the offline gate check (shield/rl/viability.py) and the exit-aware turn probe."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from embodied_safety.envs.control.dubins import U_MAX, DubinsVLEnv, render_states
from embodied_safety.shield.rl.exits import EXIT_MARGIN
from embodied_safety.shield.rl.gate_check import safer_turn_gap
from embodied_safety.shield.rl.viability import (
    action_values,
    escapes,
    failure_bound,
    frame_states,
    references,
    rendered_margin,
    state_margins,
    tree_value,
    unrecoverable,
)
from tests.helpers import dubins_rollouts


def state(x: float, y: float, th: float, goal: tuple[float, float], obstacle: tuple[float, float]) -> list[float]:
    return [x, y, th, *goal, *obstacle]


def test_a_goal_ahead_or_a_circle_that_fits_saves_the_car_and_a_wall_ahead_does_not() -> None:
    states = np.array([
        state(0.0, 0.0, 0.0, (0.5, 0.0), (-0.6, -0.6)),    # the goal 0.5 ahead: reached in 0.9 s
        state(0.0, -0.5, 0.0, (-0.9, 0.9), (0.9, 0.9)),    # a full-left circle (centre (0, 0.045)) stays inside
        state(0.98, 0.0, 0.0, (-0.6, -0.6), (-0.5, 0.5)),  # 0.02 from the edge, heading out: no turn is tight enough
        state(0.2, 0.3, 0.0, (-0.6, -0.6), (0.2, 0.3)),    # inside the unsafe zone now
    ])
    assert escapes(states).tolist() == [True, True, False, False]
    assert unrecoverable(states).tolist() == [False, False, True, True]
    # one segment of 0.5 s is not the 3 s question: the wall ahead is 0.02 away, the circle has room
    assert escapes(states, depth=1).tolist() == [True, True, False, False]


def test_the_tree_search_is_no_weaker_than_holding_one_turn() -> None:
    rng = np.random.default_rng(0)
    n = 256
    states = np.column_stack([rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-np.pi, np.pi, n),
                              rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-0.9, 0.9, (n, 2))])
    held = np.zeros(n, bool)
    for u in (-U_MAX, 0.0, U_MAX):  # a single rate held 3 s is one branch of the tree
        held |= escapes(states, rates=(u,))
    full = escapes(states)
    assert np.all(full[held]) and full.sum() > held.sum()


def test_the_tree_value_is_the_worst_margin_of_the_best_branch() -> None:
    far = state(-0.5, -0.5, np.pi / 4, (0.9, -0.9), (0.6, 0.6))  # heading at the obstacle 1.56 away, room to turn
    wall = state(0.98, 0.0, 0.0, (-0.6, -0.6), (-0.5, 0.5))      # heading out 0.02 from the edge
    v = tree_value(np.array([far, wall]))
    start = np.hypot(1.1, 1.1) - 0.55
    assert 0.0 < v[0] <= start + 1e-9  # it can keep clear, but not further than it starts (the first step is closer)
    assert v[1] <= EXIT_MARGIN  # every branch leaves the workspace
    assert (tree_value(np.array([far, wall]), floor=0.0) >= 0).tolist() == escapes(np.array([far, wall])).tolist()
    # pruning below the floor changes nothing at or above it
    np.testing.assert_allclose(tree_value(np.array([far]), floor=0.0), v[:1])


def test_action_values_rank_the_turn_away_from_the_obstacle_above_the_turn_into_it() -> None:
    # heading +x at an obstacle ahead and a little to the left (y > 0): the right turn (u < 0) is the safer one
    s = np.array([state(-0.6, 0.0, 0.0, (-0.9, 0.9), (0.4, 0.1))])
    q = action_values(s, np.array([U_MAX, 0.0, -U_MAX]))[0]
    assert q[2] > q[1] > q[0]
    mirrored = s.copy()
    mirrored[0, 6] = -0.1  # the obstacle a little to the right: the left turn is safer
    q = action_values(mirrored, np.array([U_MAX, -U_MAX]))[0]
    assert q[0] > q[1]


def test_the_turn_probe_counts_leaving_the_workspace_as_the_worse_turn() -> None:
    # 0.1 from the right edge heading up, the obstacle down-left: by the obstacle alone the right turn (u < 0,
    # away from it) is safer, but it drives through the edge; with exits counted the left turn is the safer one
    s = np.array([state(0.9, -0.5, np.pi / 2, (-0.6, 0.6), (-0.7, -0.7))])
    assert safer_turn_gap(s, exits=False)[0] < 0.0
    assert safer_turn_gap(s, exits=True)[0] > 0.5


@pytest.fixture(scope="module")
def rollouts():
    return dubins_rollouts(7, 6, 3)


def test_frame_states_replay_the_recorded_episodes(rollouts) -> None:
    states = frame_states(rollouts)
    assert states.shape == (rollouts.n_frames, 7)
    first = rollouts.frame_t == 0
    env = DubinsVLEnv()
    for e, seed in enumerate(rollouts.episode_seeds):  # each episode starts at its seed's reset state
        np.testing.assert_array_equal(states[first][e], env.reset(seed=int(seed))[1]["state"])
    refs = references(rollouts, 100, states)
    assert refs["unsafe_frame_rate"] <= refs["unrecoverable_frame_rate"] <= 1.0
    assert 0.0 <= refs["failure_bound_frame_rate"] <= 1.0


def test_frame_states_refuse_rollouts_that_are_not_these_episodes(rollouts) -> None:
    other = dataclasses.replace(rollouts, episode_seeds=np.asarray(rollouts.episode_seeds) + 1)
    with pytest.raises(ValueError, match="does not reproduce frame"):
        frame_states(other)


def test_failure_bound_marks_frames_up_to_the_last_cost_and_whole_exit_episodes() -> None:
    class R:  # two episodes: a cost at t = 1 of a timeout, then an exit (ended at step 2 of 100, no success)
        frame_episode = np.array([0, 0, 0, 0, 1, 1, 1])
        frame_t = np.array([0, 1, 2, 3, 0, 1, 2])
        cost = np.array([0, 1, 0, 0, 0, 0, 0], float)
        episode_success = np.array([False, False])
        episode_length = np.array([100, 2])

    assert failure_bound(R(), 100).tolist() == [True, True, False, False, True, True, True]


def test_a_margin_of_the_states_replaces_the_simulators_in_the_search() -> None:
    rng = np.random.default_rng(3)
    n = 64
    states = np.column_stack([rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-np.pi, np.pi, n),
                              rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-0.9, 0.9, (n, 2))])
    turns = np.array([U_MAX, 0.0, -U_MAX])
    # the simulator's own margin passed as ``ell`` is the default search
    np.testing.assert_allclose(tree_value(states, depth=3, ell=state_margins), tree_value(states, depth=3))
    np.testing.assert_allclose(action_values(states, turns, depth=3, ell=state_margins),
                               action_values(states, turns, depth=3))
    # read only at each segment's end the margin is checked on fewer states: never more pessimistic
    sparse = tree_value(states, depth=3, ell=state_margins, check_every=5)
    assert np.all(sparse >= tree_value(states, depth=3) - 1e-12)
    # a margin that sees no hazard leaves only the exits: a branch's value is +inf or at most the exit margin
    calm = tree_value(states, depth=3, ell=lambda s: np.full(len(s), np.inf))
    assert np.all((calm == np.inf) | (calm <= EXIT_MARGIN))
    assert (calm == np.inf).sum() > 0


def test_the_rendered_margin_scores_the_frames_of_the_states_in_chunks() -> None:
    rng = np.random.default_rng(4)
    states = np.column_stack([rng.uniform(-0.9, 0.9, (7, 2)), rng.uniform(-np.pi, np.pi, 7),
                              rng.uniform(-0.9, 0.9, (7, 2)), rng.uniform(-0.9, 0.9, (7, 2))])
    seen: list[tuple[int, bool]] = []

    def source(frames, gt_margin, gt_cost):  # a frame scorer: the mean pixel; it is given no simulator signal
        seen.append((len(frames), bool(np.isnan(gt_margin).all() and np.isnan(gt_cost).all())))
        return frames.reshape(len(frames), -1).mean(axis=1)

    ell = rendered_margin(source, chunk=3)
    np.testing.assert_allclose(ell(states), render_states(states).reshape(7, -1).mean(axis=1))
    assert seen == [(3, True), (3, True), (1, True)]
    assert ell(states[:0]).shape == (0,)
