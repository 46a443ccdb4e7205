"""Rubric-search labels (``shield/rl/distill.py::label_values``, the ``gated_search`` warm-up's cost): one thread vs
two, on random Dubins-VL states scored by the embedded pixel rubric scorer, printed as a ratio in one process; the
labels must be equal.

    python benchmarks/rubric_labels.py [--states 400]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--states", type=int, default=400)
    args = ap.parse_args(argv)

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.shield.costs.calibrate import PlattCalibration
    from embodied_safety.shield.costs.margins import rubric_margin
    from embodied_safety.shield.costs.pixel_scorer import PixelScorer
    from embodied_safety.shield.costs.rubrics import default_rubric_set
    from embodied_safety.shield.rl.distill import RUBRIC_COLUMNS, label_values
    from embodied_safety.shield.rl.viability import rendered_margin

    rng = np.random.default_rng(0)
    n = args.states
    states = np.column_stack([rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-np.pi, np.pi, n),
                              rng.uniform(-0.9, 0.9, (n, 2)), rng.uniform(-0.5, 0.5, (n, 2))])
    rset = default_rubric_set("dubins_vl")
    ell = rendered_margin(rubric_margin(PixelScorer(rset), rset, PlattCalibration(0.5, -1.5)))
    grid = np.linspace(-U_MAX, U_MAX, 9)
    times, labels = {}, {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        labels[workers] = label_values(states, grid, ell, RUBRIC_COLUMNS, workers=workers)
        times[workers] = time.perf_counter() - t0
    same = np.array_equal(labels[1], labels[2], equal_nan=True)
    print(f"rubric-search labels, {n} states x {RUBRIC_COLUMNS} actions: 1 thread {times[1]:.1f} s, 2 threads "
          f"{times[2]:.1f} s: {times[1] / times[2]:.2f}x; labels equal: {same}")
    if not same:
        raise SystemExit("the threaded labels differ from the serial ones")


if __name__ == "__main__":
    main()
