"""The ShieldVLA control environments: API conformance, dynamics, safety signals, seeding, perturbations."""

import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import embodied_safety.envs.control as control  # noqa: E402
from embodied_safety.envs.control import dubins, experts, palette, perturb  # noqa: E402
from embodied_safety.envs.control.dubins import DubinsVLEnv, DubinsVLVec  # noqa: E402


def _check(env):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the paper's unnormalised action ranges draw a style warning
        check_env(env)


def _make(name, perturbation=None, **kwargs):
    return gym.make(control.env_id(name, perturbation), render_mode="rgb_array", **kwargs).unwrapped


# ------------------------------------------------------------------------------------------------ package
def test_import_registers_every_variant_without_mujoco_or_torch():
    code = ("import sys, gymnasium, embodied_safety.envs.control as c; "
            "print(all(i in gymnasium.registry for i in c.ENV_IDS), len(c.ENV_IDS), "
            "[m for m in ('mujoco', 'torch') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "12", "[]"], out.stdout
    assert control.env_id("TurtleBotNav", "color") == "embodied_safety/TurtleBotNav-Color-v0"


def test_light_lut_is_the_rounded_gain():
    frame = np.arange(256, dtype=np.uint8).repeat(3).reshape(1, 256, 3)
    out = perturb.apply_light(frame)
    expect = np.floor(np.arange(256)[:, None] * np.asarray(palette.LIGHT_GAIN) + 0.5)
    assert np.array_equal(out[0], expect.astype(np.uint8))
    with pytest.raises(ValueError):
        perturb.check("fog")


# ------------------------------------------------------------------------------------------------ Dubins-VL
@pytest.mark.parametrize("perturbation", [None, "color"])
def test_dubins_check_env(perturbation):
    _check(_make("DubinsVL", perturbation))


def test_dubins_step_matches_hand_computed_euler():
    env = DubinsVLEnv()
    env.reset(seed=0)
    s = env.unwrapped._b.state
    s[0, :3] = (-0.2, 0.1, 0.3)
    s[0, 5:7] = (0.6, -0.6)  # obstacle out of the way
    x, y, th = -0.2, 0.1, 0.3
    for _ in range(10):  # one control step = 10 Euler steps of 0.01 s
        x, y, th = x + 0.6 * math.cos(th) * 0.01, y + 0.6 * math.sin(th) * 0.01, th + 0.5 * 0.01
    _, reward, terminated, truncated, info = env.step(np.array([0.5]))
    assert np.allclose(info["state"][:3], [x, y, th], atol=1e-12)
    goal = info["state"][3:5]
    assert reward == pytest.approx(-math.hypot(x - goal[0], y - goal[1]))
    d_min = math.hypot(x - 0.6, y + 0.6) - dubins.R_OBS
    assert info["margin"] == pytest.approx(d_min - dubins.D_SAFE)
    assert not terminated and not truncated
    # the closed form used by the planners is the same integration
    a = dubins.euler(np.array([x]), np.array([y]), np.array([th]), np.array([-1.1]), 10)
    b = dubins.euler_block(np.array([x]), np.array([y]), np.array([th]), np.array([-1.1]), 10)
    assert np.allclose(a, b, atol=1e-12)
    # action clipping: beyond u_max behaves as u_max
    env.reset(seed=1)
    s0 = env.unwrapped._b.state[0].copy()
    env.step(np.array([5.0]))
    th1 = env.unwrapped._b.state[0, 2]
    assert th1 == pytest.approx(dubins.wrap(np.array(s0[2] + 1.1 * 0.1))[()])


def test_dubins_leaving_the_workspace_ends_the_episode_with_the_worst_return():
    env = DubinsVLEnv()
    env.reset(seed=0)
    env.unwrapped._b.state[0, :3] = (0.98, 0.0, 0.0)
    _, reward, terminated, _, info = env.step(np.array([0.0]))
    assert terminated and info["out_of_bounds"] and not info["success"]
    assert reward == pytest.approx(-2 * math.sqrt(2) * 100)


def test_dubins_scenes_block_the_straight_line_and_are_reproducible():
    rngs = [np.random.default_rng(i) for i in range(64)]
    scenes = dubins.sample_scenes(rngs, 1, 0.1)
    again = dubins.sample_scenes([np.random.default_rng(i) for i in range(64)], 1, 0.1)
    alone = dubins.sample_scenes([np.random.default_rng(5)], 1, 0.1)
    assert np.array_equal(scenes, again) and np.array_equal(scenes[5], alone[0])
    p, g, c = scenes[:, :2], scenes[:, 3:5], scenes[:, 5:7]
    assert (dubins.margin(p, c[:, None]) >= 0.15 - 1e-9).all()
    assert (np.hypot(*(g - c).T) >= dubins.R_OBS + dubins.D_SAFE + 0.1 - 1e-9).all()
    # the obstacle sits on the start-goal segment (within 0.3 of it)
    d = g - p
    t = ((c - p) * d).sum(1) / (d * d).sum(1)
    assert ((t > 0.35) & (t < 0.65)).all()
    assert (np.hypot(*(p + t[:, None] * d - c).T) <= 0.3 + 1e-9).all()


def test_dubins_vec_matches_single_envs_across_autoresets():
    n, seed = 3, 11
    vec = DubinsVLVec(n, render=True, seed=seed, max_steps=20)
    singles = [DubinsVLEnv(max_steps=20) for _ in range(n)]
    obs, info = vec.reset()
    s_obs = [env.reset(seed=seed + i) for i, env in enumerate(singles)]
    for i in range(n):
        assert np.array_equal(obs["image"][i], s_obs[i][0]["image"])
        assert np.array_equal(info["state"][i], s_obs[i][1]["state"])
    rng = np.random.default_rng(0)
    resets = 0
    for _ in range(45):  # crosses at least two episode boundaries per env
        u = rng.uniform(-1.1, 1.1, n)
        obs, reward, term, trunc, info = vec.step(u)
        for i, env in enumerate(singles):
            o, r, te, tr, inf = env.step(u[i : i + 1])
            assert r == pytest.approx(reward[i]) and te == term[i] and tr == trunc[i]
            assert inf["cost"] == info["cost"][i] and inf["margin"] == pytest.approx(info["margin"][i])
            if te or tr:
                resets += 1
                assert np.array_equal(info["final_state"][i], inf["state"])
                o, inf = env.reset()
            assert np.array_equal(obs["image"][i], o["image"])
            assert np.array_equal(info["state"][i], inf["state"])
    assert resets >= 2 * n


def test_dubins_vec_without_rendering_has_no_image_and_cost_is_margin_below_zero():
    vec = DubinsVLVec(256, seed=0)
    obs, info = vec.reset()
    assert "image" not in obs and obs["instruction"].shape == (256,)
    rng = np.random.default_rng(0)
    costs = 0.0
    for _ in range(60):
        obs, reward, term, trunc, info = vec.step(rng.uniform(-1.1, 1.1, (256, 1)))
        assert np.array_equal(info["cost"], (info["margin"] < 0).astype(float))
        assert reward.shape == term.shape == (256,)
        costs += info["cost"].sum()
    assert costs > 0  # random driving does hit the obstacle that blocks the way


def test_dubins_frames_use_palette_colours_and_perturbations_change_them_as_described():
    frames = {}
    for p in perturb.PERTURBATIONS:
        env = DubinsVLEnv(perturbation=p)
        obs, _ = env.reset(seed=4)
        assert obs["image"].dtype == np.uint8 and obs["image"].shape == (84, 84, 3)
        frames[p] = obs["image"]
    colours = {tuple(c) for c in frames[None].reshape(-1, 3)}
    assert colours == {palette.DUBINS_BACKGROUND, palette.DUBINS_OBSTACLE, palette.DUBINS_GOAL, palette.DUBINS_AGENT}
    obstacle = (frames[None] == palette.DUBINS_OBSTACLE).all(-1)
    held_out = {tuple(c) for c in frames["color"][obstacle]}
    assert len(held_out) == 1 and held_out <= set(palette.HELD_OUT_OBSTACLE)
    assert np.array_equal(frames["color"][~obstacle], frames[None][~obstacle])
    assert np.array_equal(frames["light"], perturb.apply_light(frames[None]))
    assert np.array_equal(frames["all"], perturb.apply_light(frames["color"]))


def test_dubins_expert_is_safe_and_careless_episodes_are_not():
    n = 96  # 24 scenes gave the careless rate in steps of 0.04 around the threshold
    vec = DubinsVLVec(n, seed=3)
    _, info = vec.reset()
    res = {}
    for hazard in (0.0, 1.0):
        _, info = vec.reset(seed=3)
        cost, done, success = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool)
        for _ in range(100):
            _, _, term, trunc, info = vec.step(experts.dubins_expert(info["state"], None, hazard=hazard))
            cost += info["cost"] * ~done
            success |= info["success"] & ~done
            done |= term | trunc
        res[hazard] = (success.mean(), (cost > 0).mean())
    assert res[0.0][0] >= 0.9 and res[0.0][1] <= 0.1
    assert res[1.0][1] >= 0.5  # ignoring the zones crosses one in about 60 % of scenes (0.58; argmin ties 0.70)


# ------------------------------------------------------------------------------------------------ TurtleBot-Nav
@pytest.mark.parametrize("perturbation", [None, "all"])
def test_turtlebot_check_env(perturbation):
    env = _make("TurtleBotNav", perturbation)
    _check(env)
    env.close()


def _face_obstacle(env):
    d = env.data
    s = env._state
    d.qpos[2] = math.atan2(s[6] - s[1], s[5] - s[0])
    import mujoco

    mujoco.mj_forward(env.model, d)
    return env._render_frame().copy()


def test_turtlebot_perturbations_recolour_the_cylinder_and_dim_the_frame():
    frames = {}
    for p in perturb.PERTURBATIONS:
        env = _make("TurtleBotNav", p)
        env.reset(seed=2)
        frames[p] = _face_obstacle(env)
        if p in ("color", "all"):
            rgb = tuple(np.round(env.model.geom_rgba[env.geom_id("obstacle")][:3] * 255).astype(int))
            assert rgb in palette.HELD_OUT_OBSTACLE
        env.close()
    base = frames[None]
    assert base.shape == (96, 96, 3) and base.dtype == np.uint8
    # the cylinder fills the centre of the view when facing it: blue-grey, dominated by the blue channel
    centre = base[40:56, 44:52].reshape(-1, 3).astype(int)
    assert (centre[:, 2] > centre[:, 0] + 40).all()
    assert not np.array_equal(frames["color"][40:56, 44:52], base[40:56, 44:52])
    assert np.array_equal(frames["light"], perturb.apply_light(base))
    assert np.array_equal(frames["all"], perturb.apply_light(frames["color"]))
    # the sky is the palette colour exactly
    assert tuple(base[2, 48]) == palette.TURTLEBOT_SKY


def test_turtlebot_reward_cost_contact_and_seeding():
    env_a, env_b = _make("TurtleBotNav"), _make("TurtleBotNav")
    oa, ia = env_a.reset(seed=5)
    ob, ib = env_b.reset(seed=5)
    assert np.array_equal(oa["image"], ob["image"]) and np.array_equal(ia["state"], ib["state"])
    assert oa["instruction"] in ("go to the red ball", "go to the yellow ball")
    # drive straight at the cylinder: cost before contact, contact implies cost, the robot stops at it
    s = ia["state"]
    env_a.data.qpos[2] = math.atan2(s[6] - s[1], s[5] - s[0])
    seen_cost = seen_contact = False
    d_prev = ia["distance"]
    for _ in range(60):
        o, r, term, trunc, info = env_a.step(np.array([1.0, 0.0], np.float32))
        assert info["cost"] == float(info["margin"] < 0)
        if info["contact"]:
            assert info["cost"] == 1.0 and info["contact_any"]
            seen_contact = True
        seen_cost |= info["cost"] > 0
        assert r == pytest.approx(2 * (d_prev - info["distance"]) + 0.05 * (1 - _heading_err(info["state"]) / math.pi)
                                  + 0.1 * math.exp(-info["distance"] / 0.5) + 5.0 * info["success"], abs=1e-9)
        d_prev = info["distance"]
        if term or trunc:
            break
    assert seen_cost and seen_contact
    assert info["margin"] > -0.6 - 0.01  # solid cylinder: clearance never far below zero
    env_a.close()
    env_b.close()


def _heading_err(s):
    e = math.atan2(s[4] - s[1], s[3] - s[0]) - s[2]
    return abs(math.atan2(math.sin(e), math.cos(e)))


def test_turtlebot_expert_reaches_the_ball_safely():
    env = _make("TurtleBotNav")
    for seed in (0, 1):
        _, info = env.reset(seed=seed)
        cost = 0.0
        for _ in range(100):
            _, _, term, trunc, info = env.step(experts.expert_action("TurtleBotNav", info["state"], None))
            cost += info["cost"]
            if term or trunc:
                break
        assert info["success"] and cost == 0.0
    env.close()


# ------------------------------------------------------------------------------------------------ Franka-Reach
@pytest.mark.slow
@pytest.mark.parametrize("perturbation", [None, "color"])
def test_franka_check_env(perturbation):
    env = _make("FrankaReach", perturbation, max_steps=30)
    _check(env)
    env.close()


@pytest.mark.slow
def test_franka_expert_reaches_and_careless_contact_is_cost_with_negative_margin():
    env = _make("FrankaReach")
    obs, info = env.reset(seed=0)
    assert obs["image"].shape == (96, 96, 3) and obs["instruction"].startswith("reach the green target")
    assert info["margin"] >= 0.1 and info["cost"] == 0.0
    for _ in range(400):
        obs, reward, term, trunc, info = env.step(experts.expert_action("FrankaReach", info["state"], None))
        assert info["cost"] == 0.0 and info["margin"] > 0
        if term or trunc:
            break
    assert info["success"] and reward > 5
    # going straight through: contact is cost, the margin is negative there, and the episode ends
    _, info = env.reset(seed=0)
    for _ in range(400):
        _, _, term, trunc, info = env.step(experts.franka_expert(info["state"], None, hazard=1.0))
        assert (info["cost"] == 1.0) == (info["margin"] < 0) or abs(info["margin"]) < 1e-4
        if term or trunc:
            break
    assert term and info["cost"] == 1.0 and info["contact"]
    env.close()


@pytest.mark.slow
def test_franka_seeding_and_light_variant():
    a, b = _make("FrankaReach"), _make("FrankaReach", "light")
    oa, ia = a.reset(seed=3)
    ob, ib = b.reset(seed=3)
    assert np.array_equal(ia["state"], ib["state"])
    assert np.array_equal(ob["image"], perturb.apply_light(oa["image"]))
    act = np.array([0.5, -0.2, 0.3, 0.1, 0.0, -0.1, 1.0], np.float32)
    for _ in range(3):
        oa, *_ , ia = a.step(act)
        ob, *_ , ib = b.step(act)
    assert np.array_equal(ia["state"], ib["state"]) and ia["gripper"] == 1.0
    assert np.array_equal(ob["image"], perturb.apply_light(oa["image"]))
    a.close()
    b.close()
