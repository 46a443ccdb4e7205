"""Experiment (docs/shield_ppo.md, "Stop 39"): what would a critic that had learned the HJ value *exactly* score on the
offline check's turn probe?

The simulator's HJ action values (:func:`~embodied_safety.shield.rl.viability.action_values`: a turn rate held one
control step, then the best bang-straight-bang continuation, exits counted) stand in for the perfect critic. On the
check's probe states (:func:`~embodied_safety.shield.rl.gate_check.near_obstacle_states`, seed 5) this prints how
often their best candidate over the critic's 9-point grid has the sign of the probe's safer turn (the issue's
"best candidate agrees"), and how often they rank the two full turns as the probe does.

    python experiments/hj_probe_ceiling.py        # -> experiments/results/hj_probe_ceiling.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--min-gap", type=float, default=0.05)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/hj_probe_ceiling.json"))
    args = ap.parse_args(argv)

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.gate_check import near_obstacle_states, safer_turn_gap
    from embodied_safety.shield.rl.viability import action_values

    states = near_obstacle_states(args.n, args.seed, render=False)[0]
    gap = safer_turn_gap(states)
    grid = np.linspace(-U_MAX, U_MAX, 9)  # the critic's candidates besides the policy mean (candidates = 9)
    q = action_values(states, grid)
    best = grid[q.argmax(axis=1)]
    hj_gap = q[:, -1] - q[:, 0]  # full left minus full right
    clear, hj_clear = np.abs(gap) > args.min_gap, np.abs(hj_gap) > args.min_gap
    want = np.sign(gap[clear])
    both = clear & hj_clear
    out = {"probe_states": float(clear.sum()), "hj_states": float(hj_clear.sum()), "both_clear": float(both.sum()),
           "best_candidate_agreement": float(np.mean(np.sign(best[clear]) == want)),
           "best_is_straight": float(np.mean(best[clear] == 0.0)),
           "turn_ranking_agreement": float(np.mean(np.sign(hj_gap[clear]) == want)),
           "turn_ranking_agreement_both_clear": float(np.mean(np.sign(hj_gap[both]) == np.sign(gap[both])))}
    print(json.dumps(out, indent=1))
    write_json(args.out, out)
    return out


if __name__ == "__main__":
    main()
