"""Experiment (docs/shield_ppo.md, "Stop 48", "Stop 49"): a distilled warm critic for a data clone's start — the oracle
reference, or the rubric-search critic (``--run gated_search``) — and the stage's offline gate check of it (or of any
stored warm critic).

``gated_oracle``'s warm critic (a keypoint critic regressed onto the simulator's HJ action values, ``shield/rl/distill.py``)
is built by the stage's own task (``tasks.shield_ppo.warm_critic``, stored by content key under
``.cache/shield/critic_warm/``) only when ``shield_ppo.runs`` lists ``gated_oracle``; this builds it from the clone's
``params.yaml`` without running the stage, then runs the stage's check (``tasks.shield_ppo.check_gate``) at each
``--delta``, on the clone's BC rollouts. ``--warm margin=path`` checks stored critics instead (``rubric``, ``gt``).
Run from a data clone that ran ``bc_policy``, ``shield_rollouts`` and ``calibrate``:

    python experiments/oracle_warm_check.py --delta 0.2 0.0 --out experiments/results/gate_check_oracle.json
    python experiments/oracle_warm_check.py --run gated_search --out experiments/results/gate_check_search.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from results_json import write_results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warm", action="append", default=[], help="margin=path of a stored warm critic to check "
                    "instead of building the oracle")
    ap.add_argument("--run", default="gated_oracle", help="the run whose warm critic is built (its RUN_CRITIC recipe)")
    ap.add_argument("--delta", type=float, nargs="+", default=[0.2])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from embodied_safety.config.params import load_params
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.rl.runs import CriticKey, ppo_config
    from embodied_safety.threads import pin_stage_threads
    from flows.shield_ppo import env_inputs
    from tasks.shield import STORE
    from tasks.shield_ppo import check_gate, warm_critic

    pin_stage_threads()
    cfg, label = load_params("shield_ppo", ShieldPPOConfig), load_params("rubric_label", RubricLabelConfig)
    env = "dubins"
    inputs = env_inputs(env)
    critics = dict(w.split("=", 1) for w in args.warm)
    if not critics:
        ccfg = ppo_config(cfg, env, args.run, 0).critic
        key = CriticKey.of(args.run, ccfg)
        critics[key.margin] = str(warm_critic.fn(inputs, key.margin, ccfg, dict(cfg.warmup), label, STORE))
    out: dict[str, Any] = {}
    for margin, warm in critics.items():
        for delta in args.delta:
            res = check_gate.fn(inputs, margin, Path(warm), delta, label, STORE)
            out[f"{margin}@{delta:g}"] = {"critic": warm, **res}
            print(f"{margin} {warm} δ={delta:g}: Q ≤ δ {res['infeasible_frac']:.3f}, Q ≤ 0 {res['infeasible_frac_at_0']:.3f}"
                  f" (unrecoverable {res.get('unrecoverable_frame_rate', float('nan')):.3f}), near-frame turn agreement "
                  f"{res.get('near_frame_turn_agreement', float('nan')):.3f}; selective {res['selective']}, "
                  f"knows the safer turn {res['knows_safer_turn']}", flush=True)
    write_results(args.out, out)


if __name__ == "__main__":
    main()
