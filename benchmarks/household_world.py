"""Benchmark the household world: primitive steps/s and snapshot+restore time on one core.

Targets (issue 2): >= 20,000 primitive steps/s and <= 100 us per snapshot+restore. Printed as
ratios against (a) the target and (b) a naive baseline measured in the same process
(``copy.deepcopy`` of the world for rollback), and against OmniGibson's ~2 s/primitive, 0.1 s/restore.

    python benchmarks/household_world.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import time
from pathlib import Path

from embodied_safety.envs.household.actions import PRIMITIVES
from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import generate_suite
from embodied_safety.io import write_json


def _pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/household_world.json"))
    args = parser.parse_args()
    _pin_one_core()
    tasks = [compile_task(t) for t in generate_suite()["train"]]
    rng = random.Random(0)
    # workload: each task's golden plan plus as many random primitives (exercises failures too)
    workloads = []
    for c in tasks:
        objs = sorted(c.problem.instances)
        rand = []
        for _ in range(len(c.task.example_planning)):
            name = rng.choice(sorted(PRIMITIVES))
            rand.append(f"{name}({', '.join(rng.choice(objs) for _ in PRIMITIVES[name])})")
        workloads.append((c, [s.action for s in c.task.example_planning[:-1]] + rand))
    worlds = [c.new_world() for c, _ in workloads]

    steps, t0 = 0, time.perf_counter()
    for _ in range(args.repeat):
        for (_, actions), w in zip(workloads, worlds, strict=True):
            snap = w.snapshot()
            for a in actions:
                w.step(a)
            steps += len(actions)
            w.restore(snap)
    step_time = time.perf_counter() - t0
    steps_per_s = steps / step_time

    # snapshot + restore, mid-episode state (golden prefix executed)
    mids = []
    for c, actions in workloads:
        w = c.new_world()
        for a in actions[: len(actions) // 2]:
            w.step(a)
        mids.append(w)
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        for w in mids:
            w.restore(w.snapshot())
    ours_us = (time.perf_counter() - t0) / (n * len(mids)) * 1e6
    t0 = time.perf_counter()
    m = 5
    for _ in range(m):
        for w in mids:
            clone = copy.deepcopy(w.facts), copy.deepcopy(w.history)
            w.facts, w.history = copy.deepcopy(clone[0]), copy.deepcopy(clone[1])
    naive_us = (time.perf_counter() - t0) / (m * len(mids)) * 1e6

    result = {
        "tasks": len(tasks),
        "steps": steps,
        "steps_per_s": round(steps_per_s),
        "steps_per_s_vs_target_20000": round(steps_per_s / 20000, 2),
        "steps_per_s_vs_omnigibson_0.5": round(steps_per_s / 0.5),
        "snapshot_restore_us": round(ours_us, 2),
        "snapshot_restore_target_100us_ratio": round(100 / ours_us, 1),
        "naive_deepcopy_snapshot_restore_us": round(naive_us, 2),
        "speedup_vs_naive_deepcopy": round(naive_us / ours_us, 1),
        "speedup_vs_omnigibson_restore_0.1s": round(0.1e6 / ours_us),
    }
    write_json(args.out, result)
    for k, v in result.items():
        print(f"{k:40s} {v}")


if __name__ == "__main__":
    main()
