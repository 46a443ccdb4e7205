"""Experiment (docs/shield_ppo.md, "Stop 45"): does PPO at the demo budget improve the policy it optimises?

The stage evaluates the deterministic policy (the mean action); PPO optimises the stochastic one (the BC log-std,
≈ 0.37 of the half-range). If the trained runs improved the stochastic return while the deterministic policy lost
success, the demo's loss would be an evaluation mismatch, not a learning failure. This evaluates the start and the
given policy directories both ways on the same held-out episodes (``runs.EVAL_BASE``, ``--episodes`` of them; the
stochastic noise is seeded per episode), with the stage's threads and CPU kernels. Run from a data clone:

    python experiments/stochastic_eval.py --policy ppo_lag/0=.cache/shield/ppo/<key>/policy ... \\
        --out experiments/results/stochastic_eval.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", action="append", default=[], help="name=policy directory")
    ap.add_argument("--episodes", type=int, default=300)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from embodied_safety.threads import pin_stage_threads

    pin_stage_threads()
    from embodied_safety.envs.control.dubins import DubinsVLVec
    from embodied_safety.io import write_json
    from embodied_safety.shield.policy.demos import episode_seeds
    from embodied_safety.shield.policy.rollouts import evaluate_policy
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import EVAL_BASE
    from flows._shield import BC

    def evaluate(policy: Any, deterministic: bool) -> dict[str, float]:
        m = evaluate_policy(None, policy, episode_seeds(EVAL_BASE, range(args.episodes)), deterministic=deterministic,
                            n_envs=64, make_vec=lambda k: DubinsVLVec(k, render=True))
        return {k: float(m[k]) for k in ("sr", "reach_rate", "violation_rate", "csc", "mean_return")}

    out: dict[str, Any] = {"episodes": args.episodes, "policies": {}}
    for name, path in [("start", str(BC / "dubins")), *(p.split("=", 1) for p in args.policy)]:
        policy = load_policy(Path(path))
        out["policies"][name] = {"path": path, "deterministic": evaluate(policy, True),
                                 "stochastic": evaluate(policy, False)}
        print(name, out["policies"][name], flush=True)
        write_json(args.out, out)


if __name__ == "__main__":
    main()
