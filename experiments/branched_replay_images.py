"""Experiment (docs/shield_ppo.md, "Stop 39"): the branched warm-up replay of ``branched_replay.py`` on the image
pipeline.

Until stop 40 the stage warmed each Dubins-VL critic on the BC policy's rollouts only; this is the experiment that
measured the branched replay the stage now has (``shield_ppo.warmup.branch_steps``, :mod:`.sim_branches`,
through ``runs.warm_start_critic``). The replay also holds simulator branches: from every ``--every``-th rollout frame (its state replayed, :mod:`.viability`),
each full turn and straight held ``--branch-steps`` control steps, every branch frame rendered (Dubins-VL's own
rasteriser) and given its margin by the same source as the rollout frames (``gt``: the simulator's ℓ; ``rubric``:
the calibrated pixel scorer on the rendered frame), exits capped as in the stage. The critic (the stage's CPU config
and warm-up code, ``critic.warm_start``) is then checked with the stage's check (``check_on_rollouts``). Run from a
clone with the ShieldVLA part-1 outputs (``dvc repro calibrate``); ``--no-branches`` gives the same warm-up without
them.

    python experiments/branched_replay_images.py --margin rubric --td 1000   # -> experiments/results/branched_replay_images.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--margin", default="rubric", choices=["rubric", "gt"])
    ap.add_argument("--target", default="best", choices=["best", "policy_mean"])
    ap.add_argument("--regress", type=int, default=200)
    ap.add_argument("--td", type=int, default=1000)
    ap.add_argument("--branch-steps", type=int, default=5)
    ap.add_argument("--every", type=int, default=3, help="branch from every k-th rollout frame")
    ap.add_argument("--no-branches", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("experiments/results/branched_replay_images.json"))
    args = ap.parse_args(argv)

    import torch

    from embodied_safety.config.params import load_params
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.io import write_json
    from embodied_safety.shield.costs.sources import margin_for
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.gate_check import check_on_rollouts
    from embodied_safety.shield.rl.runs import ppo_config, rollout_margins, warm_start_critic
    from embodied_safety.threads import pin_stage_threads
    from flows.shield_ppo import env_inputs
    from tasks.shield import STORE

    pin_stage_threads()
    torch.manual_seed(0)
    cfg = load_params("shield_ppo", ShieldPPOConfig)
    label_cfg = load_params("rubric_label", RubricLabelConfig)
    inputs = env_inputs("dubins")
    run = {("rubric", "best"): "gated_selective", ("rubric", "policy_mean"): "gated_d1", ("gt", "best"): "gated_gt"}
    ccfg = dataclasses.replace(ppo_config(cfg, "dubins", run[(args.margin, args.target)], 0).critic, target=args.target)
    source = margin_for("dubins", args.margin, inputs.calibration, label_cfg, STORE)
    rs, ell = rollout_margins(source, inputs.rollouts)
    policy = load_policy(inputs.bc)
    warmup = {"regress": args.regress, "td": args.td}
    if not args.no_branches:
        warmup |= {"branch_steps": args.branch_steps, "branch_every": args.every}
    critic, extra = warm_start_critic("dubins", policy, rs, ell, ccfg, warmup, source=source)
    res = check_on_rollouts("dubins", critic.eval(), policy, rs, ell, ppo_config(cfg, "dubins", "gated", 0).delta)
    row = {"margin": args.margin, "target": args.target, "regress": args.regress, "td": args.td,
           "branches": not args.no_branches, "branch_steps": args.branch_steps, "every": args.every,
           "transitions": extra["transitions"], "warm_s": extra["seconds"],
           **{k: v for k, v in res.items() if not isinstance(v, str)}}
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    write_json(args.out, [*rows, row])
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
