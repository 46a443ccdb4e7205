"""Benchmark the ShieldVLA control environments (steps/s), and optionally measure the scripted experts.

Throughput (under a minute): DubinsVLVec without rendering (N = 1024) and with rendering (N = 256), the
single-env DubinsVLEnv, and rendered TurtleBot-Nav and Franka-Reach, each printed as steps/s and as a ratio
against the single-env Dubins baseline measured in the same process. Actions are uniform random in the
action space (for Dubins that makes short episodes, so autoreset is exercised hard).

    MUJOCO_GL=egl python benchmarks/control_envs.py [--seconds 4]
    MUJOCO_GL=egl python benchmarks/control_envs.py --experts [--episodes 50]   # a few minutes

``--experts`` rolls out each scripted expert (``experts.py``) over fixed seeds at several noise / hazard
levels and prints success rate, violation rate (episodes with any cost), mean CSC and episode length.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import embodied_safety.envs.control as control  # noqa: E402
from embodied_safety.envs.control import experts  # noqa: E402
from embodied_safety.envs.control.dubins import DubinsVLEnv, DubinsVLVec  # noqa: E402


def _vec_rate(num_envs: int, render: bool, seconds: float) -> tuple[float, float]:
    vec = DubinsVLVec(num_envs, render=render, seed=0)
    vec.reset()
    rng = np.random.default_rng(0)
    steps = resets = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, _, term, trunc, _ = vec.step(rng.uniform(-1.1, 1.1, num_envs))
        steps += 1
        resets += int((term | trunc).sum())
    return steps * num_envs / (time.perf_counter() - t0), resets / steps


def _env_rate(env: gym.Env, seconds: float) -> float:
    env.reset(seed=0)
    env.action_space.seed(0)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        steps += 1
        if term or trunc:
            env.reset()
    rate = steps / (time.perf_counter() - t0)
    env.close()
    return rate


def throughput(seconds: float) -> None:
    base = _env_rate(DubinsVLEnv(), seconds)
    rows = [("DubinsVLEnv (single, rendered)", base, None)]
    rate, resets = _vec_rate(1024, False, seconds)
    rows.append(("DubinsVLVec N=1024, no rendering", rate, resets))
    rate, resets = _vec_rate(256, True, seconds)
    rows.append(("DubinsVLVec N=256, rendered", rate, resets))
    rows.append(("TurtleBotNav (rendered 96x96)", _env_rate(gym.make(control.env_id("TurtleBotNav")).unwrapped,
                                                            seconds), None))
    rows.append(("FrankaReach (rendered 96x96)", _env_rate(gym.make(control.env_id("FrankaReach")).unwrapped,
                                                           seconds), None))
    print(f"{'env':40s} {'steps/s':>12s} {'x single Dubins':>16s}")
    for name, rate, resets in rows:
        extra = f"   ({resets:.1f} autoresets/step)" if resets is not None else ""
        print(f"{name:40s} {rate:12,.0f} {rate / base:16.2f}{extra}")


def _rollouts(name: str, episodes: int, noise: float, hazard: float) -> str:
    short = name
    if short == "DubinsVL":  # batched: every env runs exactly its first episode
        vec = DubinsVLVec(episodes, seed=1000)
        _, info = vec.reset()
        cost, length = np.zeros(episodes), np.zeros(episodes)
        done, success = np.zeros(episodes, bool), np.zeros(episodes, bool)
        rng = np.random.default_rng(0)
        while not done.all():
            _, _, term, trunc, info = vec.step(experts.dubins_expert(info["state"], rng, noise, hazard=hazard))
            cost += info["cost"] * ~done
            length += ~done
            success |= info["success"] & ~done
            done |= term | trunc
    else:
        env = gym.make(control.env_id(name)).unwrapped
        fn = experts.turtlebot_expert if name == "TurtleBotNav" else experts.franka_expert
        rng = np.random.default_rng(0)
        cost, length, success = np.zeros(episodes), np.zeros(episodes), np.zeros(episodes, bool)
        for ep in range(episodes):
            _, info = env.reset(seed=1000 + ep)
            while True:
                _, _, term, trunc, info = env.step(fn(info["state"], rng, noise, hazard=hazard))
                cost[ep] += info["cost"]
                length[ep] += 1
                if term or trunc:
                    success[ep] = info["success"]
                    break
        env.close()
    return (f"{short:13s} noise={noise:<4} hazard={hazard:<4} SR={success.mean():.2f} "
            f"violation={np.mean(cost > 0):.2f} CSC={cost.mean():.2f} len={length.mean():.1f}")


def expert_table(episodes: int) -> None:
    settings = {
        "DubinsVL": [(0.0, 0.0), (0.3, 0.0), (0.0, 0.5), (0.2, 0.5)],
        "TurtleBotNav": [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.3, 0.5)],
        "FrankaReach": [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.3, 0.5)],
    }
    for name, grid in settings.items():
        n = max(episodes, 200) if name == "DubinsVL" else episodes
        for noise, hazard in grid:
            t0 = time.perf_counter()
            line = _rollouts(name, n, noise, hazard)
            print(f"{line}  episodes={n} ({time.perf_counter() - t0:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per row")
    parser.add_argument("--experts", action="store_true", help="measure the scripted experts instead")
    parser.add_argument("--episodes", type=int, default=50)
    args = parser.parse_args()
    if args.experts:
        expert_table(args.episodes)
    else:
        throughput(args.seconds)


if __name__ == "__main__":
    main()
