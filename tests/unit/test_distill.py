"""The distilled critics (shield/rl/distill.py: the oracle reference, the rubric search) and how the stage plans them
(runs.RUN_CRITIC, CriticKey)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from embodied_safety.config.shield_ppo import ShieldPPOConfig
from embodied_safety.envs.control.dubins import U_MAX, DubinsVLEnv, render_states
from embodied_safety.shield.costs.margins import MarginSource
from embodied_safety.shield.policy.visuomotor import policy_for_env
from embodied_safety.shield.rl.critic import CriticConfig, load_critic
from embodied_safety.shield.rl.distill import (
    RUBRIC_SEARCH,
    distill,
    distill_set,
    distill_warm_start,
    label_values,
)
from embodied_safety.shield.rl.runs import CriticKey, plan, ppo_config, warm_start_critic
from embodied_safety.shield.rl.viability import action_values, frame_states, rendered_margin
from tests.helpers import dubins_rollouts


def test_the_oracle_run_plans_its_own_distilled_keypoint_critic() -> None:
    cfg = ShieldPPOConfig(hyper={"dubins": {"critic_hidden": [8]}}, runs={"dubins": ["gated", "gated_gt", "gated_oracle"]},
                          seeds={"dubins": [0, 1]})
    todo = plan(cfg, "dubins")
    keys = list(todo.critics)
    assert keys == [CriticKey("rubric", "policy_mean"), CriticKey("gt", "policy_mean"),
                    CriticKey("gt", "policy_mean", "distill")]
    assert [k.name for k in keys] == ["rubric/policy_mean", "gt/policy_mean", "gt/policy_mean/distill"]
    oracle = todo.critics[keys[2]]
    assert (oracle.warmup, oracle.encoder, oracle.pose_aux, oracle.pose_aux_states) == ("distill", "keypoints", 1.0, 30000)
    assert oracle.hidden == (8,)  # the env's critic_* keys still apply
    assert todo.critics[keys[1]].warmup == "td" and todo.critics[keys[1]].encoder == "policy"
    assert {j.run: j.critic for j in todo.jobs if j.seed == 1}["gated_oracle"] == keys[2]
    # the env's own critic_* keys override the run's defaults (and then apply to every critic of the env)
    tuned = ShieldPPOConfig(cpu={"dubins": {"critic_pose_aux_states": 50}})
    assert ppo_config(tuned, "dubins", "gated_oracle", 0).critic.pose_aux_states == 50
    assert ppo_config(tuned, "dubins", "gated_oracle", 0).margin == "gt"
    # the oracle keeps its distilled values through PPO (no online TD); the other runs train their critic online
    assert not ppo_config(cfg, "dubins", "gated_oracle", 0).online_td and ppo_config(cfg, "dubins", "gated_gt", 0).online_td
    assert ppo_config(ShieldPPOConfig(cpu={"dubins": {"online_td": True}}), "dubins", "gated_oracle", 0).online_td
    with pytest.raises(ValueError, match="warmup"):
        CriticConfig(warmup="bc")  # type: ignore[arg-type]
    # the oracle with a light recovery pull shares the oracle's warm critic; its pull is fixed, not the cost dual
    both = plan(ShieldPPOConfig(runs={"dubins": ["gated_oracle", "gated_oracle_recovery"]}), "dubins")
    assert len(both.critics) == 1 and len({j.critic for j in both.jobs}) == 1
    rec = ppo_config(cfg, "dubins", "gated_oracle_recovery", 0)
    assert (rec.safety_update, rec.recovery_weight, rec.online_td, rec.margin) == ("recovery", 0.2, False, "gt")
    assert ppo_config(cfg, "dubins", "gated_oracle", 0).recovery_weight is None  # None: β
    with pytest.raises(ValueError, match="recovery_weight"):
        dataclasses.replace(rec, recovery_weight=-0.1)


def test_the_distill_set_labels_every_frame_for_the_whole_grid() -> None:
    rs = dubins_rollouts(900, 2, 2)
    states = frame_states(rs)
    grid = np.linspace(-U_MAX, U_MAX, 5)
    frames, words, all_states, labels, train = distill_set(rs, states, 12, grid, seed=0)
    n = len(states)
    assert frames.shape[0] == len(words) == len(all_states) == labels.shape[0] == n + 12
    assert labels.shape[1] == 5
    np.testing.assert_array_equal(frames[:n].numpy(), np.asarray(rs.frames))
    np.testing.assert_array_equal(frames[n:].numpy(), render_states(all_states[n:]))
    np.testing.assert_allclose(labels.numpy(), action_values(all_states, grid), rtol=1e-6, atol=1e-6)
    assert words[:n] == rs.frame_instructions()
    np.testing.assert_array_equal(train, np.arange(n + 12))
    odd = np.arange(1, n, 2)  # a training pool: the jittered states come from it, the training indices are it + them
    _, _, more, _, train = distill_set(rs, states, 6, grid, seed=0, pool=odd)
    np.testing.assert_array_equal(train, np.concatenate([odd, n + np.arange(6)]))
    assert {tuple(s) for s in more[n:, 3:]} <= {tuple(s) for s in states[odd, 3:]}  # their scenes are the pool's


def test_distilling_fits_the_simulator_values_and_saves(tmp_path) -> None:
    torch.manual_seed(0)
    rs = dubins_rollouts(910, 2, 2)
    policy = policy_for_env(DubinsVLEnv())
    cfg = CriticConfig(hidden=(64,), batch_size=64, lr=1e-3, warmup="distill", pose_aux=0.5, pose_aux_states=16)
    grid = np.linspace(-U_MAX, U_MAX, cfg.candidates)
    frames, words, _, labels, _ = distill_set(rs, frame_states(rs), 16, grid, seed=0)

    def mse(critic) -> float:
        with torch.no_grad():
            f = critic.embed(frames, words)
            q = torch.stack([critic.q_features(f, torch.full((len(f), 1), float(u))) for u in grid], dim=1)
            return float(((q.squeeze(-1) - labels) ** 2).mean())

    short, _ = distill_warm_start("dubins", policy, rs, cfg, 1)
    critic, extra = distill_warm_start("dubins", policy, rs, cfg, 200)
    assert extra["transitions"] == len(frames) and extra["warmup"][0]["step"] == 200.0
    assert "pose_loss" in extra["warmup"][0]
    assert mse(critic) < 0.5 * mse(short)
    critic.save(tmp_path / "c", extra=extra)
    again = load_critic(tmp_path / "c", policy.config)
    assert again.config.warmup == "distill"
    x = frames[:4]
    a = torch.zeros(4, 1)
    assert torch.allclose(again(x, words[:4], a), critic(x, words[:4], a))


def test_the_distilled_warm_up_refuses_what_it_cannot_do() -> None:
    rs = dubins_rollouts(920, 1, 1)
    policy = policy_for_env(DubinsVLEnv())
    cfg = CriticConfig(hidden=(8,), warmup="distill")
    with pytest.raises(ValueError, match="Dubins-VL only"):
        distill_warm_start("turtlebot", policy, rs, cfg, 5)
    with pytest.raises(ValueError, match="distill > 0"):
        distill_warm_start("dubins", policy, rs, cfg, 0)
    with pytest.raises(ValueError, match="warmup.distill"):
        warm_start_critic("dubins", policy, rs, np.zeros(len(rs.frames)), cfg, {"regress": 1, "td": 1})
    with pytest.raises(ValueError, match="unknown"):
        ShieldPPOConfig(warmup={"regress": 1, "td": 1, "distil": 5})


def test_the_rubric_search_labels_a_few_grid_actions_per_frame_from_the_frames_alone() -> None:
    rs = dubins_rollouts(930, 2, 2)
    states = frame_states(rs)
    grid = np.linspace(-U_MAX, U_MAX, 5)
    calls: list[bool] = []

    def source(frames, gt_margin, gt_cost):  # a frame scorer standing in for the rubric one: it sees pixels only
        calls.append(bool(np.isnan(gt_margin).all() and np.isnan(gt_cost).all()))
        return frames.reshape(len(frames), -1).mean(axis=1) / 255.0 - 0.5

    ell = rendered_margin(source)
    labels = label_values(states, grid, ell, columns=2, seed=0)
    finite = np.isfinite(labels)
    assert (finite.sum(axis=1) == 2).all() and calls and all(calls)
    for j in range(len(grid)):  # each labelled value is the search with that margin, RUBRIC_SEARCH's tree
        rows = np.flatnonzero(finite[:, j])
        if len(rows):
            np.testing.assert_allclose(labels[rows, j],
                                       action_values(states[rows], grid[j:j + 1], ell=ell, **RUBRIC_SEARCH)[:, 0])
    assert np.array_equal(label_values(states, grid, ell, columns=2, seed=0, workers=1), labels, equal_nan=True)
    assert np.array_equal(label_values(states, grid, ell, columns=2, seed=0, workers=3), labels, equal_nan=True)
    assert (np.isfinite(label_values(states, grid, ell, seed=0))).all()  # no ``columns``: the whole grid
    np.testing.assert_allclose(label_values(states, grid), action_values(states, grid))  # no margin: the exact values


def test_distilling_trains_on_the_labelled_pairs_only(tmp_path) -> None:
    torch.manual_seed(0)
    rs = dubins_rollouts(940, 2, 2)
    policy = policy_for_env(DubinsVLEnv())
    cfg = CriticConfig(hidden=(32,), batch_size=32, lr=1e-3, warmup="distill", candidates=5)
    grid = np.linspace(-U_MAX, U_MAX, cfg.candidates)
    frames, words, states, labels, train = distill_set(rs, frame_states(rs), 0, grid, seed=0)
    partial = labels.clone()
    partial[:, 1:] = float("nan")  # only the full right turn labelled: NaNs elsewhere must never reach the loss
    critic, rows = distill(policy, cfg, grid, frames, words, states, partial, train, steps=30)
    assert all(np.isfinite(r["critic_loss"]) for r in rows)
    assert all(torch.isfinite(p).all() for p in critic.parameters())
    partial[0] = float("nan")
    with pytest.raises(ValueError, match="no labelled grid action"):
        distill(policy, cfg, grid, frames, words, states, partial, train, steps=1)


def test_the_rubric_search_run_plans_a_rubric_distilled_critic() -> None:
    cfg = ShieldPPOConfig(runs={"dubins": ["gated", "gated_oracle_recovery", "gated_search"]})
    keys = list(plan(cfg, "dubins").critics)
    assert keys[-1] == CriticKey("rubric", "policy_mean", "distill") and keys[-1].name == "rubric/policy_mean/distill"
    run = ppo_config(cfg, "dubins", "gated_search", 0)
    assert (run.margin, run.safety_update, run.recovery_weight, run.online_td) == ("rubric", "recovery", 0.2, False)
    assert (run.critic.warmup, run.critic.encoder, run.critic.pose_aux_states) == ("distill", "keypoints", 10000)
    # its δ (the rubric margin's units) overrides Table 14's row, yields to a CPU override; each critic is checked at
    # the δ of the first run that needs it
    table = ShieldPPOConfig(hyper={"dubins": {"delta": 0.2}}, runs=cfg.runs)
    assert ppo_config(table, "dubins", "gated_search", 0).delta == -0.5 and ppo_config(table, "dubins", "gated", 0).delta == 0.2
    assert ppo_config(ShieldPPOConfig(cpu={"dubins": {"delta": 0.1}}), "dubins", "gated_search", 0).delta == 0.1
    assert list(plan(table, "dubins").deltas.values()) == [0.2, 0.2, -0.5]
    rs = dubins_rollouts(950, 1, 1)
    policy = policy_for_env(DubinsVLEnv())
    with pytest.raises(ValueError, match="gt or rubric"):
        distill_warm_start("dubins", policy, rs, CriticConfig(hidden=(8,), warmup="distill"), 5,
                           source=MarginSource("binary"))


def test_the_stage_warm_up_distils_from_the_rubric_search_when_the_margin_is_the_rubric() -> None:
    from embodied_safety.shield.costs.calibrate import PlattCalibration

    torch.manual_seed(0)
    rs = dubins_rollouts(960, 1, 1)
    policy = policy_for_env(DubinsVLEnv())
    cfg = CriticConfig(hidden=(8,), batch_size=16, warmup="distill", candidates=5, pose_aux_states=4)
    rubric = MarginSource("rubric", lambda frames: frames.reshape(len(frames), -1).mean(axis=1) / 64.0,
                          PlattCalibration(1.0, -1.0))
    ell = np.zeros(len(rs.frames))
    critic, extra = warm_start_critic("dubins", policy, rs, ell, cfg, {"regress": 1, "td": 1, "distill": 3}, source=rubric)
    n = len(rs.frames) + 4
    assert extra["labels"] == "rubric" and extra["transitions"] == n and extra["labelled_pairs"] == 3 * n
    _, gt = warm_start_critic("dubins", policy, rs, ell, cfg, {"regress": 1, "td": 1, "distill": 3}, source=MarginSource("gt"))
    assert gt["labels"] == "gt" and gt["labelled_pairs"] == 5 * n  # the simulator's values: the whole grid
