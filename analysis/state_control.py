"""The state-based Dubins control (docs/shield_ppo.md): the offline gate check, or the runs compared over seeds.

    python analysis/state_control.py check                         # data/shield/gate_check_state.json
    python analysis/state_control.py compare --seeds 0 1 2         # a table + data/shield/state_control.json

The runs and their seeds are :mod:`embodied_safety.shield.rl.state_control`'s.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from embodied_safety.io import write_json
from embodied_safety.shield.rl.state_control import RUNS, StateControlConfig, check, compare, table


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["check", "compare"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="compare: PPO seeds")
    ap.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS), help="compare: runs")
    ap.add_argument("--steps", type=int, default=StateControlConfig.total_steps, help="compare: env steps per run")
    ap.add_argument("--warm-td", type=int, default=StateControlConfig.warm_td, help="TD steps of the warm-up")
    ap.add_argument("--exit-is-failure", action="store_true", help="leaving the workspace is a failure to the critic")
    ap.add_argument("--out", default=None, help="JSON (default data/shield/{gate_check_state,state_control}.json)")
    args = ap.parse_args(argv)
    cfg = StateControlConfig(total_steps=args.steps, warm_td=args.warm_td, exit_is_failure=args.exit_is_failure)
    if args.command == "check":
        out = check(cfg)
        path = args.out or "data/shield/gate_check_state.json"
    else:
        out = compare(cfg, args.runs, args.seeds)
        print(table(out))
        path = args.out or "data/shield/state_control.json"
    write_json(Path(path), out)
    return out


if __name__ == "__main__":
    main()
