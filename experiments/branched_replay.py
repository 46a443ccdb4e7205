"""Experiment (docs/shield_ppo.md, "Stop 39"): can the offline warm-up teach the critic which way to turn if the replay
holds the actions the start policy does not take?

Offline, on the start policy's transitions only, App. A's max over candidate actions has no data on the actions that
would recover (stops 35 and 37). The simulator can branch: from every replay state, each full turn and straight
held one control step, its next state and margin (exits capped, ``exits.cap_exits``). This script warms the state
control's critic (``state_control.warm_critic``'s code) on the start rollouts plus those branches and runs the
offline check (:func:`~embodied_safety.shield.rl.gate_check.gate_check`, the turn ranking against the simulator's HJ
action values) with and without them, per critic target and exit rule. ``simulator``: no TD at all, the critic
regressed onto the simulator's HJ action values of the replay states (what the network can represent with exact
labels). Every critic trains on four fifths of the start envs' trajectories; the turn ranking is also reported on
the held-out fifth (``heldout_*``).

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
        "hj_best_candidate_agreement", "hj_probe_agreement", "gradient_agreement", "frame_turn_agreement",
        "near_frame_turn_agreement", "near_frame_turn_states", "selective", "knows_safer_turn")


def with_branches(start: Any, rates: np.ndarray, exit_is_failure: bool, seed: int, steps: int = 1) -> Any:
    """The start data with a replay holding its transitions and the branches from every state."""
    from embodied_safety.shield.rl.critic import ReplayBuffer
    from embodied_safety.shield.rl.sim_branches import branches

    old = start.replay
    b = branches(start.states, rates, exit_is_failure, steps)
    buf = ReplayBuffer(old.size + len(b["image"]), old.image.shape[1:], old.action.shape[1], seed=seed,
                       dtype=np.float32)
    buf.add(old.image[:old.size], old.instructions(np.arange(old.size)), old.action[:old.size], old.margin[:old.size],
            old.next_image[:old.size], old.next_margin[:old.size], old.terminated[:old.size])
    buf.add(b["image"], [""] * len(b["image"]), b["action"], b["margin"], b["next_image"], b["next_margin"],
            b["terminated"])
    return dataclasses.replace(start, replay=buf)


def subset(start: Any, keep: np.ndarray, seed: int) -> Any:
    """The start data restricted to the transitions ``keep`` (a mask over its frames, in the replay's order)."""
    from embodied_safety.shield.rl.critic import ReplayBuffer

    old, idx = start.replay, np.flatnonzero(keep)
    buf = ReplayBuffer(len(idx), old.image.shape[1:], old.action.shape[1], seed=seed, dtype=np.float32)
    buf.add(old.image[idx], old.instructions(idx), old.action[idx], old.margin[idx], old.next_image[idx],
            old.next_margin[idx], old.terminated[idx])
    return dataclasses.replace(start, replay=buf, states=start.states[idx], margin=start.margin[idx],
                               unsafe=start.unsafe[idx])


def regress_on_simulator(policy: Any, states: np.ndarray, cfg: Any, target: str, steps: int) -> Any:
    """A critic regressed (no TD) onto the simulator's HJ action values (:func:`.viability.action_values`) of every
    state for the critic's 9-point action grid: what the critic's network can represent when the labels are exact."""
    import torch

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.shield.rl.critic import CriticTrainer, SafetyCritic
    from embodied_safety.shield.rl.viability import action_values

    grid = np.linspace(-U_MAX, U_MAX, cfg.candidates)
    y = torch.as_tensor(action_values(states.astype(np.float64), grid), dtype=torch.float32).reshape(-1)
    obs = torch.as_tensor(np.repeat(states, len(grid), axis=0), dtype=torch.float32)
    act = torch.as_tensor(np.tile(grid, len(states))[:, None], dtype=torch.float32)
    torch.manual_seed(cfg.seed)
    critic = SafetyCritic.from_policy(policy, cfg.critic(target))
    trainer = CriticTrainer(critic)
    gen = torch.Generator().manual_seed(cfg.seed)
    critic.train()
    for _ in range(steps):
        idx = torch.randint(0, len(y), (cfg.critic(target).batch_size,), generator=gen)
        loss, _ = trainer.fit(critic.embed(obs[idx], [""] * len(idx)), act[idx], y[idx])
        trainer.step(loss, target=False)
    return critic.eval()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--targets", nargs="+", default=["policy_mean", "best"])
    ap.add_argument("--exits", nargs="+", default=["failure"], choices=["failure", "ignored"])
    ap.add_argument("--replays", nargs="+", default=["start", "branched"], choices=["start", "branched", "simulator"])
    ap.add_argument("--warm-td", type=int, default=3000)
    ap.add_argument("--branch-steps", type=int, default=1, help="control steps each branch holds its rate")
    ap.add_argument("--out", type=Path, default=Path("experiments/results/branched_replay.json"))
    args = ap.parse_args(argv)

    import torch

    from embodied_safety.envs.control.dubins import U_MAX
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.gate_check import frame_turn_agreement, gate_check
    from embodied_safety.shield.rl.state_control import (
        StateControlConfig,
        bc_policy,
        start_rollouts,
        warm_critic,
    )
    from embodied_safety.threads import set_torch_threads

    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    done = {(r["seed"], r["exits"], r["replay"], r["target"], r["warm_td"], r.get("branch_steps", 1)) for r in rows}
    rates = np.array([-U_MAX, 0.0, U_MAX])
    for seed in args.seeds:
        for exits in args.exits:
            cfg = StateControlConfig(seed=seed, warm_td=args.warm_td, exit_is_failure=exits == "failure")
            set_torch_threads(cfg.threads)
            policy = bc_policy(cfg)
            full = start_rollouts(policy, cfg)
            # the frames are step-major over start_envs envs: hold out a fifth of the envs' trajectories
            held = (np.arange(len(full.states)) % cfg.start_envs) < cfg.start_envs // 5
            start, test = subset(full, ~held, seed), subset(full, held, seed)
            for replay in args.replays:
                data = (with_branches(start, rates, cfg.exit_is_failure, seed, args.branch_steps)
                        if replay == "branched" else start)
                if replay == "simulator" and exits == "ignored":
                    continue  # the simulator's values count exits
                for target in args.targets:
                    steps = args.branch_steps if replay == "branched" else 0
                    key = (seed, exits, replay, target, args.warm_td, steps)
                    if key in done:
                        continue
                    critic = (regress_on_simulator(policy, start.states, cfg, target, args.warm_td)
                              if replay == "simulator" else warm_critic(policy, data, cfg, target))
                    res = gate_check(critic, policy, torch.as_tensor(start.states), [""] * len(start.states),
                                     start.margin, start.unsafe, cfg.delta, obs="state",
                                     states=start.states.astype(np.float64))
                    heldout = frame_turn_agreement(critic, torch.as_tensor(test.states), [""] * len(test.states),
                                                   test.states.astype(np.float64))
                    rows.append({"seed": seed, "exits": exits, "replay": replay, "target": target,
                                 "warm_td": args.warm_td, "branch_steps": steps, "replay_size": data.replay.size,
                                 **{k: res[k] for k in KEYS}, **{f"heldout_{k}": v for k, v in heldout.items()}})
                    write_json(args.out, rows)  # after every critic: a killed run keeps what it finished
                    print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
