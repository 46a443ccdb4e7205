"""Experiment (docs/shield_ppo.md, "Stop 49"): do labels searched with the *rubric* margin know the safer turn, and
how many frames do they flag — before any critic is trained on them?

On a data clone's BC rollout frames (states replayed, :func:`.viability.frame_states`), the rubric-search action
values of the two full turns (:func:`.viability.action_values` with ``ell`` = the rubric margin of the rendered branch
states, :func:`.viability.rendered_margin`, read at each 0.5 s segment's end) are compared with the simulator's exact
HJ values (every step, depth 5) on the near-obstacle frames where those differ by more than 0.05 (the gate check's
``near_frame_turn_agreement`` set), for search depths ``--depths``; and on ``--sample`` random frames, the fraction
whose rubric-search value ``min(ℓ̂(s), V̂(s)) ≤ 0`` against the unrecoverable rate (the gate check's selectivity
reference). Run from a data clone that ran ``shield_rollouts`` and ``calibrate``:

    python experiments/rubric_search_labels.py --out experiments/results/rubric_search_labels.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from results_json import write_results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--sample", type=int, default=1500)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from embodied_safety.config.params import load_params
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.shield.costs.sources import margin_for
    from embodied_safety.shield.policy.rollouts import RolloutSet
    from embodied_safety.shield.rl.viability import (
        action_values,
        frame_states,
        rendered_margin,
        state_margins,
        tree_value,
        unrecoverable,
    )
    from flows.shield_ppo import env_inputs
    from tasks.shield import STORE

    inputs = env_inputs("dubins")
    rs = RolloutSet.load(inputs.rollouts)
    states = frame_states(rs)
    label_cfg = load_params("rubric_label", RubricLabelConfig)
    ell = rendered_margin(margin_for("dubins", "rubric", inputs.calibration, label_cfg, STORE))
    turns = np.array([U_MAX, -U_MAX])
    gap = np.diff(action_values(states, turns)[:, ::-1], axis=1)[:, 0]
    margin = state_margins(states)
    near = np.flatnonzero((np.abs(gap) > 0.05) & (margin >= 0.0) & (margin <= 0.35))
    out: dict[str, Any] = {"frames": len(states), "near_frames": len(near), "turns": {}, "flags": {}}
    for depth in args.depths:
        t0 = time.perf_counter()
        q = action_values(states[near], turns, depth=depth, ell=ell, check_every=5)
        g = q[:, 0] - q[:, 1]
        out["turns"][str(depth)] = {"agreement": float(np.mean(np.sign(g) == np.sign(gap[near]))),
                                    "ties": float(np.mean(g == 0.0)), "seconds": time.perf_counter() - t0}
        print(f"depth {depth}: turn agreement {out['turns'][str(depth)]['agreement']:.3f} on {len(near)} near frames",
              flush=True)
    pick = np.random.default_rng(0).choice(len(states), min(args.sample, len(states)), replace=False)
    lost = unrecoverable(states[pick])
    now = ell(states[pick])
    for depth in args.depths:
        v = np.minimum(now, tree_value(states[pick], depth=depth, ell=ell, check_every=5))
        out["flags"][str(depth)] = {"flagged_at_0": float(np.mean(v <= 0)), "unrecoverable": float(lost.mean()),
                                    "lost_flagged": float(np.mean(v[lost] <= 0)),
                                    "recoverable_flagged": float(np.mean(v[~lost] <= 0))}
        print(f"depth {depth}: V ≤ 0 on {out['flags'][str(depth)]['flagged_at_0']:.3f} (unrecoverable {lost.mean():.3f})",
              flush=True)
    write_results(args.out, out)


if __name__ == "__main__":
    main()
