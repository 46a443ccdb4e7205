"""How an actor's episodes fail on a household split: repeat loops, missing ``DONE()``, and with ``--lost`` the tasks
the first model solves and a later one fails (docs/training.md).

    python analysis/failure_modes.py --split data/household/splits/test [--lost] \\
        models/bootstrap_actor/model models/safebranch/seed0/sft-sft-lr0.001
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from embodied_safety.actors.hf import HFActor
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.rollout.actor_eval import evaluate_actor
from embodied_safety.rollout.failure_modes import failure_modes, lost_tasks


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="actor dirs (HF model dirs)")
    parser.add_argument("--split", type=Path, default=Path("data/household/splits/test"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lost", action="store_true", help="list the tasks the first model solves and a later one fails")
    args = parser.parse_args(argv)
    tasks = load_task_dir(args.split)[0]
    first: Sequence[Any] = ()
    for model in args.models:
        _, results = evaluate_actor(tasks, HFActor(model, batch_size=64))
        print(model, json.dumps({k: round(v, 3) for k, v in failure_modes(results, args.repeat).items()}))
        if args.lost and first:
            for row in lost_tasks(first, results):
                print("  lost", json.dumps(row))
        first = first or results


if __name__ == "__main__":
    main()
