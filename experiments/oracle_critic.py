"""Experiment (docs/shield_ppo.md, "Stop 43"): does the stage's oracle critic pass the offline gate check?

``gated_oracle``'s warm critic (:mod:`embodied_safety.shield.rl.distill`: the keypoint encoder regressed onto the
simulator's HJ action values of the 9-point grid, the pose regression beside it, 30 k jittered states; the config
is the stage's, from ``params.yaml``) trained as the stage trains it — but on the frames of 4/5 of the BC rollout
episodes, the jittered states drawn from those — and checked on the held-out fifth (``dubins_frames.load``'s split
for ``--seed``) and in-sample: the near-obstacle turn agreement (``gate_check.frame_turn_agreement``, the check's
number) and the fraction flagged at δ = 0 against the unrecoverable-frame rate. The stage's own check reads all the
rollout frames, which its critic trained on: the in-sample row. Run from a clone with the ShieldVLA part-1 outputs:

    python experiments/oracle_critic.py --seed 0 [--steps 3000]   # -> experiments/results/oracle_critic.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="the held-out fifth and the training seed")
    ap.add_argument("--steps", type=int, default=0, help="regression steps (default: the stage's warmup.distill)")
    ap.add_argument("--out", type=Path, default=Path("experiments/results/oracle_critic.json"))
    args = ap.parse_args(argv)

    import torch
    from dubins_frames import load, split_checks

    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.distill import action_grid, distill, distill_set
    from embodied_safety.shield.rl.runs import ppo_config
    from embodied_safety.shield.rl.viability import unrecoverable

    cfg = load_params("shield_ppo", ShieldPPOConfig)
    ccfg = ppo_config(cfg, "dubins", "gated_oracle", 0).critic
    steps = args.steps or int(cfg.warmup["distill"])
    data = load(args.seed)
    policy, rollouts, states, test = data.policy, data.rollouts, data.states, data.test
    t0 = time.perf_counter()
    grid = action_grid(policy, ccfg.candidates)
    frames, words, all_states, labels, train = distill_set(rollouts, states, ccfg.pose_aux_states, grid, args.seed,
                                                           pool=np.flatnonzero(~test))
    label_s = time.perf_counter() - t0
    torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    critic, rows = distill(policy, ccfg, grid, frames, words, all_states, labels, train, steps=steps, seed=args.seed)
    row: dict[str, Any] = {"seed": args.seed, "steps": steps, "encoder": ccfg.encoder, "pose_aux": ccfg.pose_aux,
                           "extra": ccfg.pose_aux_states, "batch": ccfg.batch_size, "label_s": label_s,
                           "train_s": time.perf_counter() - t0, "loss": rows[-1]["critic_loss"]}
    lost = unrecoverable(states)
    row |= split_checks(critic, policy, frames, words, states, rollouts, test, lost)
    out: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    write_json(args.out, [*out, row])
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
