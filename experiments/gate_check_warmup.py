"""Experiment (docs/shield_ppo.md, "Stop 35"): the offline gate check of issue 21 on the *image* pipeline, as a function
of the critic's target and its TD warm-up.

The ``shield_ppo`` stage warms one critic per (margin source, target) on the BC rollouts (``shield_ppo.warmup``: 100
regression + 200 TD steps at the demo budget) and runs :func:`~embodied_safety.shield.rl.gate_check.check_on_rollouts`
on it. The state-based control reached the check's 80 % only with the HJ target ("best": max over candidate actions)
after about 3,000 TD steps (docs/shield_ppo.md). This script repeats that on the image policy: for each margin source
(``rubric``: the calibrated pixel scorer, ``gt``: the simulator's ℓ) x target (``policy_mean`` = App. D.1, ``best``
= App. A's HJ value) x TD warm-up, it warms a critic with the stage's code (``tasks.shield_ppo.warm_critic``, stored
by content key under ``.cache/shield``) and checks it. Needs the ShieldVLA part-1 outputs (``dvc repro calibrate``);
about 1-4 min per critic on 2 cores.

    python experiments/gate_check_warmup.py --td 200 1000 3000       # -> experiments/results/gate_check_warmup.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

RUN_OF = {("rubric", "policy_mean"): "gated_d1", ("rubric", "best"): "gated_selective", ("gt", "best"): "gated_gt"}
COLUMNS = ("infeasible_frac", "infeasible_frac_at_0", "unsafe_frame_rate", "margin_below_delta_rate", "best_candidate_agreement",
           "gradient_agreement", "states", "unrecoverable_frame_rate", "flag_floor_rate", "lost_flagged_at_0",
           "recoverable_flagged_at_0", "turn_ranking_agreement", "hj_turn_agreement", "hj_best_candidate_agreement",
           "hj_states", "frame_turn_agreement", "near_frame_turn_agreement", "near_frame_turn_states", "selective",
           "knows_safer_turn")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="dubins")
    ap.add_argument("--td", type=int, nargs="+", default=[200, 1000, 3000], help="TD warm-up steps")
    ap.add_argument("--regress", type=int, default=200, help="regression warm-up steps")
    ap.add_argument("--critics", nargs="+", default=["rubric/policy_mean", "rubric/best", "gt/best"],
                    help="margin/target pairs")
    ap.add_argument("--branch-steps", type=int, default=0, help="simulator branches in the warm-up replay "
                    "(shield_ppo.warmup.branch_steps; 0 = the BC rollouts only)")
    ap.add_argument("--branch-every", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/gate_check_warmup.json"))
    args = ap.parse_args(argv)

    import torch

    from embodied_safety.config.params import load_params
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.runs import MAX_STEPS, ppo_config
    from embodied_safety.threads import pin_stage_threads
    from flows.shield_ppo import env_inputs
    from tasks.shield import STORE
    from tasks.shield_ppo import check_gate, warm_critic

    pin_stage_threads()
    torch.manual_seed(0)
    cfg = load_params("shield_ppo", ShieldPPOConfig)
    label_cfg = load_params("rubric_label", RubricLabelConfig)
    env = args.env
    inputs = env_inputs(env)
    from embodied_safety.shield.policy.rollouts import RolloutSet
    from embodied_safety.shield.rl.viability import references

    refs = references(RolloutSet.load(inputs.rollouts), MAX_STEPS[env])  # unsafe / failure-bound / unrecoverable
    bound = {k: refs[k] for k in ("failure_bound_frame_rate", "exit_episode_rate")}
    print(json.dumps(refs))
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    done = {(r["env"], r["margin"], r["target"], r["regress"], r["td"], r.get("branch_steps", 0)) for r in rows}
    branching = {"branch_steps": args.branch_steps, "branch_every": args.branch_every} if args.branch_steps else {}
    for pair in args.critics:
        margin, target = pair.split("/")
        pcfg = ppo_config(cfg, env, RUN_OF[(margin, target)], 0)
        for td in args.td:
            if (env, margin, target, args.regress, td, args.branch_steps) in done:
                continue
            ccfg = dataclasses.replace(pcfg.critic, target=target)
            warm = warm_critic.fn(inputs, margin, ccfg, {"regress": args.regress, "td": td, **branching}, label_cfg,
                                  STORE)
            res = check_gate.fn(inputs, margin, warm, pcfg.delta, label_cfg, STORE)
            rows.append({"env": env, "margin": margin, "target": target, "regress": args.regress, "td": td, **branching,
                         "delta": pcfg.delta, **{k: res[k] for k in COLUMNS if k in res}, **bound})
            write_json(args.out, rows)  # after every critic: a killed run keeps what it finished
            print(json.dumps(rows[-1]), flush=True)
    print(table(rows))


def table(rows: list[dict[str, Any]]) -> str:
    """A markdown table of the rows (docs/shield_ppo.md); the largest value per column in bold."""
    from embodied_safety.evaluation.report import markdown_table

    head = ["margin / target / TD steps", "flagged Q(o, ā) ≤ δ", "Q ≤ 0", "unsafe frames", "failure-bound frames",
            "unrecoverable frames", "floor (lost or ℓ ≤ δ)", "Q ≤ 0 on lost", "Q ≤ 0 on recoverable",
            "best candidate agrees", "sign ∂Q/∂a agrees", "ranks the turns as the HJ values do (probe)",
            "... (near-obstacle rollout frames)"]
    cols = ("infeasible_frac", "infeasible_frac_at_0", "unsafe_frame_rate", "failure_bound_frame_rate",
            "unrecoverable_frame_rate", "flag_floor_rate", "lost_flagged_at_0", "recoverable_flagged_at_0",
            "best_candidate_agreement", "gradient_agreement", "hj_turn_agreement", "near_frame_turn_agreement")
    return markdown_table(head, [(f"{r['margin']} / {r['target']} / {r['td']}"
                                  + (f" + branches {r['branch_steps']}" if r.get("branch_steps") else ""), [r.get(c) for c in cols], [])
                                 for r in rows])


if __name__ == "__main__":
    main()
