"""Experiment (docs/shield_ppo.md, "Stop 39"): the branched warm-up replay of ``branched_replay.py`` on the image
pipeline.

The stage warms each Dubins-VL critic on the BC policy's rollouts only (``runs.warm_start_critic``). Here the replay
also holds simulator branches: from every ``--every``-th rollout frame (its state replayed, :mod:`.viability`),
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
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from branched_replay import branches  # noqa: E402


def render(states: np.ndarray) -> np.ndarray:
    """Dubins-VL frames ``[N, 84, 84, 3]`` of the given states (one obstacle, the default palette)."""
    from embodied_safety.envs.control.dubins import _Batch

    out = np.empty((len(states), 84, 84, 3), dtype=np.uint8)
    for i in range(0, len(states), 4096):
        part = states[i:i + 4096]
        b = _Batch(len(part), 1, 0.1, 100, 10, None, render=True)
        b.state[:] = part
        for j in range(len(part)):
            b.background[j] = b._draw_background(j)
        out[i:i + len(part)] = b.frames()
    return out


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
    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.io import write_json
    from embodied_safety.shield.costs.sources import margin_for
    from embodied_safety.shield.policy.visuomotor import load_policy
    from embodied_safety.shield.rl.critic import (
        CriticTrainer,
        ReplayBuffer,
        SafetyCritic,
        replay_from_rollouts,
        warm_start,
    )
    from embodied_safety.shield.rl.exits import EXIT_MARGIN
    from embodied_safety.shield.rl.gate_check import check_on_rollouts
    from embodied_safety.shield.rl.runs import MAX_STEPS, EnvInputs, ppo_config, rollout_margins
    from embodied_safety.shield.rl.viability import frame_states
    from embodied_safety.threads import pin_stage_threads
    from flows._shield import BC, CALIBRATION, ROLLOUTS
    from tasks.shield import STORE

    pin_stage_threads()
    torch.manual_seed(0)
    cfg = load_params("shield_ppo", ShieldPPOConfig)
    label_cfg = load_params("rubric_label", RubricLabelConfig)
    inputs = EnvInputs("dubins", BC / "dubins", ROLLOUTS / "dubins" / "rollouts.npz", CALIBRATION / "dubins")
    run = {("rubric", "best"): "gated_selective", ("rubric", "policy_mean"): "gated_d1", ("gt", "best"): "gated_gt"}
    ccfg = dataclasses.replace(ppo_config(cfg, "dubins", run[(args.margin, args.target)], 0).critic, target=args.target)
    source = margin_for("dubins", args.margin, inputs.calibration, label_cfg, STORE)
    rs, ell = rollout_margins(source, inputs.rollouts)
    policy = load_policy(inputs.bc)
    buf0 = replay_from_rollouts(rs, ell, MAX_STEPS["dubins"], exit_margin=EXIT_MARGIN)
    t0 = time.perf_counter()
    n_branch, render_check = 0, float("nan")
    if args.no_branches:
        buf = buf0
    else:
        states = frame_states(rs)
        pick = np.arange(0, len(states), args.every)
        words = rs.frame_instructions()
        b = branches(states[pick], np.array([-U_MAX, 0.0, U_MAX]), exit_is_failure=True, steps=args.branch_steps)
        s, s_next = b["image"].astype(np.float64), b["next_image"].astype(np.float64)
        img, img_next = render(s), render(s_next)
        first = render(states[pick])  # the rasteriser reproduces the rollout frames it branches from
        render_check = float(np.mean(first == np.asarray(rs.frames)[pick]))
        gt_now = b["margin"].astype(np.float64)
        gt_next = b["next_margin"].astype(np.float64)  # exits already capped
        out = gt_next <= EXIT_MARGIN
        m_now = np.concatenate([source(img[i:i + 2048], gt_now[i:i + 2048], (gt_now[i:i + 2048] < 0).astype(float))
                                for i in range(0, len(img), 2048)])
        m_next = np.concatenate([source(img_next[i:i + 2048], gt_next[i:i + 2048],
                                        (gt_next[i:i + 2048] < 0).astype(float)) for i in range(0, len(img), 2048)])
        m_next = np.where(out, np.minimum(m_next, EXIT_MARGIN), m_next)
        origin = [words[i] for i in pick[b["origin"]]]  # each branch keeps the instruction of its start frame
        n_branch = len(img)
        buf = ReplayBuffer(buf0.size + n_branch, buf0.image.shape[1:], buf0.action.shape[1], seed=0)
        buf.add(buf0.image[:buf0.size], buf0.instructions(np.arange(buf0.size)), buf0.action[:buf0.size],
                buf0.margin[:buf0.size], buf0.next_image[:buf0.size], buf0.next_margin[:buf0.size],
                buf0.terminated[:buf0.size])
        buf.add(img, origin, b["action"], m_now.astype(np.float32), img_next, m_next.astype(np.float32), b["terminated"])
    build_s = time.perf_counter() - t0
    critic = SafetyCritic.from_policy(policy, ccfg)
    trainer = CriticTrainer(critic)

    def mean_action(images: Any, instructions: Any) -> Any:
        with torch.no_grad():
            return policy(images, instructions)[0]

    t0 = time.perf_counter()
    warm_start(trainer, buf, mean_action, args.regress, args.td)
    warm_s = time.perf_counter() - t0
    res = check_on_rollouts("dubins", critic.eval(), policy, rs, ell, ppo_config(cfg, "dubins", "gated", 0).delta)
    row = {"margin": args.margin, "target": args.target, "regress": args.regress, "td": args.td,
           "branches": not args.no_branches, "branch_steps": args.branch_steps, "every": args.every,
           "branch_transitions": n_branch, "rollout_transitions": buf0.size, "render_match": render_check,
           "build_s": build_s, "warm_s": warm_s, **{k: v for k, v in res.items() if not isinstance(v, str)}}
    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    write_json(args.out, [*rows, row])
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
