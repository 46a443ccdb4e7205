"""Experiment (docs/shield_ppo.md, "Stop 39"): can the offline warm-up teach the critic which way to turn if the replay
holds the actions the start policy does not take?

Offline, on the start policy's transitions only, App. A's max over candidate actions has no data on the actions that
would recover (stops 35 and 37). The simulator can branch: from every replay state, each full turn and straight
held one control step, its next state and margin (exits capped, ``exits.cap_exits``). This script warms the state
control's critic (``state_control.warm_critic``'s code) on the start rollouts plus those branches and runs the
offline check (:func:`~embodied_safety.shield.rl.gate_check.gate_check`, the turn ranking against the simulator's HJ
action values) with and without them, per critic target and exit rule.

    python experiments/branched_replay.py --seeds 0 1 2     # -> experiments/results/branched_replay.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

KEYS = ("infeasible_frac", "infeasible_frac_at_0", "unrecoverable_frame_rate", "lost_flagged_at_0",
        "recoverable_flagged_at_0", "best_candidate_agreement", "turn_ranking_agreement", "hj_turn_agreement",
        "hj_best_candidate_agreement", "hj_probe_agreement", "gradient_agreement", "selective", "knows_safer_turn")


def branches(states: np.ndarray, rates: np.ndarray, exit_is_failure: bool, goal_radius: float = 0.1
             ) -> dict[str, np.ndarray]:
    """One control step of each rate from every state: ``(s, u, ℓ(s), s', ℓ(s'), terminated)`` arrays."""
    from embodied_safety.envs.control.dubins import euler, margin
    from embodied_safety.shield.rl.exits import cap_exits

    n = len(states)
    s = np.repeat(states.astype(np.float64), len(rates), axis=0)
    u = np.tile(rates, n)
    nxt = s.copy()
    nxt[:, 0], nxt[:, 1], nxt[:, 2] = euler(s[:, 0], s[:, 1], s[:, 2], u, 10)
    obstacles = s[:, 5:].reshape(len(s), -1, 2)
    out = (np.abs(nxt[:, 0]) > 1.0) | (np.abs(nxt[:, 1]) > 1.0)
    goal = np.hypot(nxt[:, 0] - s[:, 3], nxt[:, 1] - s[:, 4]) <= goal_radius
    m_next = margin(nxt[:, :2], obstacles)
    if exit_is_failure:
        m_next = cap_exits(m_next, out)
    return {"image": s.astype(np.float32), "action": u[:, None].astype(np.float32),
            "margin": margin(s[:, :2], obstacles).astype(np.float32), "next_image": nxt.astype(np.float32),
            "next_margin": m_next.astype(np.float32), "terminated": (out | (goal & ~out)).astype(np.float32)}


def with_branches(start: Any, rates: np.ndarray, exit_is_failure: bool, seed: int) -> Any:
    """The start data with a replay holding its transitions and the branches from every state."""
    from embodied_safety.shield.rl.critic import ReplayBuffer

    old = start.replay
    b = branches(start.states, rates, exit_is_failure)
    buf = ReplayBuffer(old.size + len(b["image"]), old.image.shape[1:], old.action.shape[1], seed=seed,
                       dtype=np.float32)
    buf.add(old.image[:old.size], old.instructions(np.arange(old.size)), old.action[:old.size], old.margin[:old.size],
            old.next_image[:old.size], old.next_margin[:old.size], old.terminated[:old.size])
    buf.add(b["image"], [""] * len(b["image"]), b["action"], b["margin"], b["next_image"], b["next_margin"],
            b["terminated"])
    return dataclasses.replace(start, replay=buf)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--targets", nargs="+", default=["policy_mean", "best"])
    ap.add_argument("--exits", nargs="+", default=["failure"], choices=["failure", "ignored"])
    ap.add_argument("--replays", nargs="+", default=["start", "branched"], choices=["start", "branched"])
    ap.add_argument("--warm-td", type=int, default=3000)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/branched_replay.json"))
    args = ap.parse_args(argv)

    import torch

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.gate_check import gate_check
    from embodied_safety.shield.rl.state_control import (
        StateControlConfig,
        bc_policy,
        start_rollouts,
        warm_critic,
    )
    from embodied_safety.shield.rl.viability import unrecoverable
    from embodied_safety.threads import set_torch_threads

    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    done = {(r["seed"], r["exits"], r["replay"], r["target"], r["warm_td"]) for r in rows}
    rates = np.array([-U_MAX, 0.0, U_MAX])
    for seed in args.seeds:
        for exits in args.exits:
            cfg = StateControlConfig(seed=seed, warm_td=args.warm_td, exit_is_failure=exits == "failure")
            set_torch_threads(cfg.threads)
            policy = bc_policy(cfg)
            start = start_rollouts(policy, cfg)
            lost = unrecoverable(start.states.astype(np.float64))
            for replay in args.replays:
                data = with_branches(start, rates, cfg.exit_is_failure, seed) if replay == "branched" else start
                for target in args.targets:
                    key = (seed, exits, replay, target, args.warm_td)
                    if key in done:
                        continue
                    critic = warm_critic(policy, data, cfg, target)
                    res = gate_check(critic, policy, torch.as_tensor(start.states), [""] * len(start.states),
                                     start.margin, start.unsafe, cfg.delta, obs="state", lost=lost)
                    rows.append({"seed": seed, "exits": exits, "replay": replay, "target": target,
                                 "warm_td": args.warm_td, **{k: res[k] for k in KEYS}})
                    write_json(args.out, rows)  # after every critic: a killed run keeps what it finished
                    print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
