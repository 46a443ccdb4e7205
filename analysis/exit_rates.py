"""How often saved Dubins-VL policies leave the workspace, on the stage's held-out evaluation episodes.

    python analysis/exit_rates.py models/shield/bc/dubins models/shield/ppo/dubins/policy [--episodes 100]

Prints one JSON line per policy: the evaluator's summary (SR, reach, violation rate, CSC) plus ``exit_rate`` and
``exit_and_unsafe_rate`` (:func:`embodied_safety.shield.rl.evaluation.exit_summary`).
"""

from __future__ import annotations

import argparse
import json

from embodied_safety.shield.policy.visuomotor import load_policy
from embodied_safety.shield.rl.evaluation import exit_summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policies", nargs="+", help="saved policy folders (config.json + model.safetensors)")
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args(argv)
    for path in args.policies:
        print(path, json.dumps({k: round(v, 4) for k, v in exit_summary(load_policy(path), args.episodes).items()}))


if __name__ == "__main__":
    main()
