"""Experiment (docs/shield_ppo.md, "Stop 44"): is a demo-budget PPO update better than a random one of its size?

For each stored stage run (``.cache/shield/<kind>/<key>/`` with ``policy/`` and ``result.json``), Δ = θ_trained − θ_start
per parameter tensor (the BC start is ``models/shield/bc/<env>``). Evaluated on the stage's evaluation episodes
(``runs.evaluate_conditions``, deterministic): the start, start + Δ (the trained policy), start − Δ, and start + R
for ``--draws`` random directions R with each tensor's Frobenius norm equal to Δ's. If the trained policy is no
better than the random ones, the 24 k-step update is a random walk of that size on this start, whatever the critic.

    python experiments/update_direction.py --runs .cache/shield/ppo/<key> ... --out experiments/results/update_direction.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from oracle_study import interval


def moved(start: dict[str, Any], delta: dict[str, Any], sign: float, gen: Any | None) -> dict[str, Any]:
    """``start + sign·Δ``, or ``start + R`` with R Gaussian, scaled to Δ's norm per tensor, when ``gen`` is given."""
    import torch

    out = {}
    for k, v in start.items():
        d = delta[k]
        if gen is not None and d.is_floating_point() and float(d.norm()) > 0:
            r = torch.randn(d.shape, generator=gen, dtype=d.dtype)
            d = r * (d.norm() / r.norm())
        out[k] = v + sign * d if v.is_floating_point() else v
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, nargs="+", required=True)
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--env", default="dubins")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    import torch

    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.io import write_json
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.runs import evaluate_conditions
    from embodied_safety.threads import pin_stage_threads
    from flows._shield import BC

    pin_stage_threads()
    episodes = load_params("shield_ppo", ShieldPPOConfig).eval_episodes[args.env]
    policy = load_policy(BC / args.env)
    start = {k: v.clone() for k, v in policy.state_dict().items()}

    def score(state: dict[str, Any]) -> dict[str, float]:
        policy.load_state_dict(state)
        m = evaluate_conditions(args.env, policy, episodes, ["in"])["in"]
        return {"sr": m["sr"], "csc": m["csc"]}

    rows: dict[str, Any] = {"start": score(start), "runs": []}
    for i, path in enumerate(args.runs):
        res = json.loads((path / "result.json").read_text())
        trained = load_policy(path / "policy").state_dict()
        delta = {k: trained[k] - start[k] if start[k].is_floating_point() else trained[k] for k in start}
        gen = torch.Generator().manual_seed(i)
        row = {"path": str(path), "run": res["run"], "seed": res["seed"],
               "delta_norm": float(sum(float(d.norm()) ** 2 for d in delta.values() if d.is_floating_point()) ** 0.5),
               "trained": score(moved(start, delta, 1.0, None)), "reversed": score(moved(start, delta, -1.0, None)),
               "random": [score(moved(start, delta, 1.0, gen)) for _ in range(args.draws)]}
        print(f"{row['run']} seed {row['seed']}: trained SR {row['trained']['sr']:.2f} CSC {row['trained']['csc']:.2f}; "
              f"reversed {row['reversed']['sr']:.2f} / {row['reversed']['csc']:.2f}; random SR "
              f"{[r['sr'] for r in row['random']]}", flush=True)
        rows["runs"].append(row)
    summary = {}
    for kind in ("trained", "reversed", "random"):
        for k in ("sr", "csc"):
            v = np.array([np.mean([r[k] for r in run[kind]]) if kind == "random" else run[kind][k] for run in rows["runs"]])
            summary[f"{kind}_{k}_minus_start"] = interval(v - rows["start"][k])
    rows["summary"] = summary
    write_json(args.out, rows)
    for k, v in summary.items():
        print(f"{k}: {v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]")


if __name__ == "__main__":
    main()
