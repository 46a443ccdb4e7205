"""Experiment (docs/shield_ppo.md, "Stop 42"): the stage's warm-up recipe — regression onto ℓ, then TD on the BC
rollouts' transitions against Eq. (4) — on a fresh keypoint encoder with the auxiliary state regression of stop 41.

Stop 41 showed that a keypoint critic distilled from the simulator's *exact* HJ action values ranks the two full
turns as the simulator does on 0.81 ± 0.03 of held-out near-obstacle frames; the stage's critics learn by TD from
a margin (the calibrated rubric scorer's, or the simulator's ℓ for the reference run) and sat at chance (0.44-0.54)
with the policy's Nature-DQN encoder. This asks whether TD from a margin gets there with the better encoder:

* the critic: ``SafetyCritic`` over ``FreshEncoder(arch)`` with the stage's Dubins-VL critic config (``target``
  overridable), trained on the transitions of 4/5 of the BC rollout episodes (``replay_from_rollouts``, exits capped
  as in the stage), ``--regress`` steps regressing ``Q(o, a)`` onto ``ℓ(o)``, then ``--td`` Eq. (4) steps with the
  Polyak target (the stage's ``warm_start`` loop, here with the encoder fine-tuned every step);
* ``--aux W``: W × the (cos θ, sin θ, x, y) regression on the batch's frames and on a batch of ``--extra`` jittered
  rendered states (``state_aux.jittered_states``), every step of both phases;
* reported at each checkpoint: the turn ranking on held-out and training near-obstacle frames
  (``gate_check.frame_turn_agreement``), and the gate's flagged fractions on all rollout frames against the
  unrecoverable rate (``gate_check.infeasible_fractions``), as the stage's check reports them.

    python experiments/critic_keypoints_td.py --margin rubric --target best --td 1000 2000 3000 --aux 1 --extra 30000
    # -> experiments/results/critic_keypoints_td.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=["dqn", "keypoints"], default="keypoints")
    ap.add_argument("--margin", choices=["rubric", "gt"], default="rubric")
    ap.add_argument("--target", choices=["policy_mean", "best"], default="best")
    ap.add_argument("--regress", type=int, default=1000)
    ap.add_argument("--td", type=int, nargs="+", default=[1000, 2000, 3000], help="TD-step checkpoints")
    ap.add_argument("--aux", type=float, default=1.0)
    ap.add_argument("--aux-batch", type=int, default=128)
    ap.add_argument("--extra", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--branch-steps", type=int, default=0, help="simulator branches in the replay (the stage's "
                    "shield_ppo.warmup.branch_steps; their transitions' poses are the branch states)")
    ap.add_argument("--branch-every", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("experiments/results/critic_keypoints_td.json"))
    args = ap.parse_args(argv)

    from dubins_frames import load
    from encoder_readout import FreshEncoder, heading_error

    from embodied_safety.config.params import load_params
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.envs.control.dubins import render_states
    from embodied_safety.io import write_json
    from embodied_safety.shield.rl.critic import CriticTrainer, SafetyCritic, replay_from_rollouts
    from embodied_safety.shield.rl.exits import EXIT_MARGIN
    from embodied_safety.shield.rl.gate_check import frame_turn_agreement, infeasible_fractions
    from embodied_safety.shield.rl.runs import MAX_STEPS, rollout_margins
    from embodied_safety.shield.rl.state_aux import PoseAux, jittered_states, pose_targets
    from embodied_safety.shield.rl.viability import state_margins, unrecoverable
    from flows.shield_ppo import env_inputs
    from tasks.shield_ppo import _margin_source

    torch.manual_seed(args.seed)
    data = load(args.seed)
    states, frames, words, test, policy = data.states, data.frames, list(data.words), data.test, data.policy
    ccfg = dataclasses.replace(data.critic_config, target=args.target, freeze_encoder=False)
    inputs = env_inputs("dubins")
    source = _margin_source(inputs, args.margin, load_params("rubric_label", RubricLabelConfig))
    rs, ell = rollout_margins(source, inputs.rollouts)
    ep = np.asarray(rs.frame_episode)
    cur = np.flatnonzero(ep[:-1] == ep[1:])  # the buffer's i-th rollout transition starts at frame cur[i]
    origin, pose_states = cur, states[cur]  # each transition's rollout frame (for the split) and the state of its o
    if args.branch_steps:
        from embodied_safety.envs.control.dubins import U_MAX
        from embodied_safety.shield.rl.sim_branches import branched_replay, branches

        buf = branched_replay(rs, ell, source, MAX_STEPS["dubins"], args.branch_steps, args.branch_every,
                              exit_margin=EXIT_MARGIN)
        pick = np.arange(0, len(states), args.branch_every)
        b = branches(states[pick], np.array([-U_MAX, 0.0, U_MAX]), exit_is_failure=True, steps=args.branch_steps)
        origin = np.concatenate([cur, pick[b["origin"]]])  # the same branches, in the order branched_replay adds them
        pose_states = np.concatenate([pose_states, b["image"].astype(np.float64)])
        k = len(cur) + np.arange(0, len(b["origin"]), 997)  # spot check: a branch frame is its state's rendering
        assert np.array_equal(buf.image[k], render_states(pose_states[k]))
    else:
        buf = replay_from_rollouts(rs, ell, MAX_STEPS["dubins"], exit_margin=EXIT_MARGIN)
    assert len(origin) == buf.size
    train_tr = np.flatnonzero(~test[origin])
    n = buf.size
    t = {k: torch.from_numpy(getattr(buf, k)[:n]) for k in ("action", "margin", "next_margin", "terminated")}
    img, nimg = torch.from_numpy(buf.image[:n]), torch.from_numpy(buf.next_image[:n])
    tw = buf.instructions(np.arange(n))
    with torch.no_grad():
        a_next = torch.cat([policy(nimg[i:i + 1024], tw[i:i + 1024])[0] for i in range(0, n, 1024)])

    aux_y = pose_targets(pose_states)  # per buffer transition
    extra, src = jittered_states(states, np.flatnonzero(~test), args.extra, args.seed)
    x_frames, x_words, x_y = torch.as_tensor(render_states(extra)), [words[k] for k in src], pose_targets(extra)

    encoder = FreshEncoder(args.arch, policy.config)
    critic = SafetyCritic(encoder, encoder.dim, policy.action_low, policy.action_high, ccfg)
    trainer = CriticTrainer(critic)
    # the stage's pose head and its optimiser; the pool batches are drawn here, from the generator of the TD batches
    pose = PoseAux(encoder.dim, args.aux, x_frames[:0], [], x_y[:0], lr=ccfg.lr)
    gen = np.random.default_rng(args.seed + 1)
    lost = unrecoverable(states)

    def step(idx: np.ndarray, y: torch.Tensor | None) -> float:
        """One step: Q(o, a) onto ``y`` (None: onto ℓ(o)), plus the auxiliary regression."""
        f = critic.embed(img[idx], [tw[i] for i in idx])
        loss, _ = trainer.fit(f, t["action"][idx], t["margin"][idx] if y is None else y)
        if args.aux:
            loss = loss + args.aux * pose.error(f, aux_y[idx])
            if len(extra):
                j = gen.integers(0, len(extra), args.aux_batch)
                loss = loss + args.aux * pose.error(critic.embed(x_frames[j], [x_words[k] for k in j]), x_y[j])
        trainer.step(loss, target=y is not None)
        pose.step()
        return float(loss.detach())

    rows: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.is_file() else []
    t0 = time.perf_counter()
    critic.train()
    for _ in range(args.regress):
        step(gen.choice(train_tr, ccfg.batch_size), None)
    trainer.target.load_state_dict(critic.state_dict())
    done = 0
    for stop in sorted(args.td):
        critic.train()
        for _ in range(stop - done):
            idx = gen.choice(train_tr, ccfg.batch_size)
            with torch.no_grad():
                nf = trainer.target.embed(nimg[idx], [tw[i] for i in idx])
                y = trainer.target_value(nf, a_next[idx], t["margin"][idx], t["next_margin"][idx],
                                         t["terminated"][idx])
            loss = step(idx, y)
        done = stop
        critic.eval()
        row: dict[str, Any] = {"arch": args.arch, "margin": args.margin, "target": args.target, "aux": args.aux,
                               "extra": args.extra, "regress": args.regress, "td": stop, "seed": args.seed,
                               "branch_steps": args.branch_steps, "transitions": int(n),
                               "train_s": time.perf_counter() - t0, "loss": loss}
        with torch.no_grad():  # the auxiliary head's heading error (rows from the stop-42 rubric run lack it)
            pred = torch.cat([pose.head(critic.embed(frames[i:i + 1024], words[i:i + 1024]))
                              for i in range(0, len(frames), 1024)]).numpy()
        err = heading_error(pred, states)
        near = (state_margins(states) >= 0.0) & (state_margins(states) <= 0.35)
        for name, mask in (("train", ~test), ("test", test)):
            ix = np.flatnonzero(mask)
            res = frame_turn_agreement(critic, frames[ix], [words[k] for k in ix], states[ix])
            row |= {f"{name}_{k}": v for k, v in res.items()}
            row |= {f"{name}_heading_median_rad": float(np.median(err[mask])),
                    f"{name}_near_heading_median_rad": float(np.median(err[mask & near]))}
        row |= infeasible_fractions(critic, policy, frames, words, ell, np.asarray(rs.cost), 0.2, lost=lost)
        rows.append(row)
        write_json(args.out, rows)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
