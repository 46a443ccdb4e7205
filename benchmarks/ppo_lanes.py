"""Benchmark: PPO runs as one-thread processes side by side ("lanes") against one process with every thread
(docs/shield_ppo.md, "Throughput"; stop 50 measured 1.6x ad hoc and ran the 1 M-step study that way).

    python benchmarks/ppo_lanes.py [--iterations 12] [--run ppo_lag] [--lanes 2] [--threads 2]

Baseline: ``--lanes`` runs one after the other in this process with ``--threads`` torch threads (the stage's way:
one run at a time). Lanes: the same runs at once, each in a spawned process with one thread. Each run is
``--iterations`` PPO iterations of ``--run`` on Dubins-VL at the stage's CPU row (16 envs x 64 steps, params.yaml),
from an untrained policy (the timing does not depend on its weights) with the rubric margin's pixel scorer and
stand-in Platt scalars. Printed: env steps/s of both and their ratio (lanes / baseline), and each lane's own rate.
The two are not byte-identical runs: a run's numbers depend on its thread count (``threads.pin_stage_threads``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def one_run(run: str, iterations: int, threads: int, calibration: str, seed: int) -> tuple[int, float]:
    """``iterations`` PPO iterations of ``run`` with ``threads`` torch threads; (env steps, seconds of training)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)  # a spawned lane: before torch's import
    import dataclasses

    import torch

    from embodied_safety.config.params import load_params
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.envs.control.dubins import DubinsVLEnv
    from embodied_safety.shield.costs.sources import margin_for
    from embodied_safety.shield.policy.visuomotor import policy_for_env
    from embodied_safety.shield.rl.ppo import train
    from embodied_safety.shield.rl.runs import ppo_config

    torch.set_num_threads(threads)
    cfg = load_params("shield_ppo", ShieldPPOConfig)
    pcfg = ppo_config(cfg, "dubins", run, seed)
    pcfg = dataclasses.replace(pcfg, total_steps=iterations * pcfg.num_envs * pcfg.rollout_steps)
    torch.manual_seed(seed)
    env = DubinsVLEnv()
    policy = policy_for_env(env)
    env.close()
    source = margin_for("dubins", pcfg.margin, calibration, load_params("rubric_label", RubricLabelConfig),
                        Path(calibration) / "cache")
    t0 = time.perf_counter()
    res = train(policy, "dubins", source, pcfg, progress=None)
    return int(res.history[-1]["env_steps"]), time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=12)
    ap.add_argument("--run", default="ppo_lag", help="a run of shield/rl/runs.py::RUNS without a warm critic file")
    ap.add_argument("--lanes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="the baseline's torch threads")
    args = ap.parse_args(argv)

    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from embodied_safety.shield.costs.calibrate import PlattCalibration

    with tempfile.TemporaryDirectory() as tmp:
        PlattCalibration(a=4.0, b=-1.0).save(Path(tmp) / "platt.json")
        calls = [(args.run, args.iterations, seed) for seed in range(args.lanes)]
        t0 = time.perf_counter()
        alone = [one_run(run, its, args.threads, tmp, seed) for run, its, seed in calls]
        base_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.lanes, mp_context=mp.get_context("spawn")) as pool:
            lanes = list(pool.map(one_run, *zip(*[(r, i, 1, tmp, s) for r, i, s in calls], strict=True)))
        lanes_s = time.perf_counter() - t0
    steps = sum(s for s, _ in alone)
    out = {"run": args.run, "iterations": args.iterations, "lanes": args.lanes, "threads": args.threads,
           "baseline_steps_per_s": steps / base_s, "lanes_steps_per_s": sum(s for s, _ in lanes) / lanes_s,
           "lane_steps_per_s": [s / t for s, t in lanes], "alone_steps_per_s": [s / t for s, t in alone]}
    out["ratio"] = out["lanes_steps_per_s"] / out["baseline_steps_per_s"]
    print(f"{args.run}, {args.lanes} runs of {args.iterations} iterations ({steps // args.lanes:,} env steps each): "
          f"one process with {args.threads} threads, one run after the other {out['baseline_steps_per_s']:.0f} steps/s "
          f"(each {', '.join(f'{x:.0f}' for x in out['alone_steps_per_s'])}); {args.lanes} one-thread processes at once "
          f"{out['lanes_steps_per_s']:.0f} steps/s (each {', '.join(f'{x:.0f}' for x in out['lane_steps_per_s'])}); "
          f"ratio {out['ratio']:.2f}x (wall, including process start)")
    return out


if __name__ == "__main__":
    main()
