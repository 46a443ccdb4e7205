"""The run matrix of the ``shield_ppo`` stage: run names -> :class:`~.ppo.PPOConfig`, which warm critics the runs
need, the job list, the warm-up of a critic on the BC rollouts and the evaluation of a trained policy.

Orchestration (Prefect tasks, stored results, MLflow) is in ``tasks/shield_ppo.py``; the tables, figures and
metrics a stage run writes per env are in :mod:`.results`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ...config.control_envs import control_env
from ...config.shield_ppo import ShieldPPOConfig
from .evaluation import evaluate_conditions


def max_steps(env: str) -> int:
    """An env's episode length (its record's ``max_steps``; 100 for an env without a record)."""
    record = control_env(env)
    return record.max_steps if record else 100


#: run name -> (method, margin source, safety update, gate); None: the stage default (``shield_ppo.safety_update``,
#: ``shield_ppo.gate``)
RUNS: dict[str, tuple[str, str, str | None, str | None]] = {
    "ppo": ("ppo", "rubric", None, None),
    "ppo_lag": ("ppo_lag", "rubric", None, None),
    "gated": ("gated", "rubric", None, None),
    "gated_gt": ("gated", "gt", None, None),
    "gated_oracle": ("gated", "gt", None, None),
    "gated_oracle_recovery": ("gated", "gt", "recovery", None),
    "gated_search": ("gated", "rubric", "recovery", None),
    "gated_binary": ("gated", "binary", None, None),
    "penalty": ("penalty", "rubric", None, None),
    "gated_dpg": ("gated", "rubric", "dpg", None),
    "gated_mixed": ("gated", "rubric", "mixed", None),
    "gated_advantage": ("gated", "rubric", "advantage", None),
    "gated_d1": ("gated", "rubric", "advantage", "d1"),
    "gated_selective": ("gated", "rubric", "advantage", "selective"),
    "gated_selective_recovery": ("gated", "rubric", "recovery", "selective"),
}
#: run name -> its critic's defaults (``critic_*`` keys of the env override them): ``gated_oracle``'s critic is the
#: oracle reference, distilled from the simulator's action values (:mod:`.distill`) with the keypoint encoder and the
#: pose regression on 30 k jittered states, the recipe that ranked the turns on held-out frames
#: (docs/shield_ppo.md)
_ORACLE_CRITIC = {"warmup": "distill", "encoder": "keypoints", "pose_aux": 1.0, "pose_aux_states": 30000}
#: ``gated_search``'s critic: the same recipe distilled from the rubric search's labels (the rubric margin of the frames
#: the simulator's branches render, :mod:`.distill`), on 10 k jittered states (each label renders ~40 frames)
RUN_CRITIC: dict[str, dict[str, Any]] = {"gated_oracle": _ORACLE_CRITIC, "gated_oracle_recovery": _ORACLE_CRITIC,
                                         "gated_search": {**_ORACLE_CRITIC, "pose_aux_states": 10000}}
#: run name -> its PPOConfig settings, over the env's Table 14 row (``hyper``) and under its CPU overrides (``cpu``):
#: the oracle reference keeps its distilled values
#: through training (no online TD: the policy-mean bootstrap would pull it back to the current policy's safety value,
#: docs/shield_ppo.md)
RUN_PPO: dict[str, dict[str, Any]] = {
    "gated_oracle": {"online_td": False},
    # the oracle with the recovery step at a light fixed pull: the run that kept the start's SR and cut CSC below
    # PPO-Lagrangian's at the demo budget over 10 seeds (docs/shield_ppo.md)
    "gated_oracle_recovery": {"online_td": False, "recovery_weight": 0.2},
    # the same gate with ShieldVLA's own signal in the critic; δ in the rubric margin's units (a logit), chosen on
    # validation episodes from the sweep 0.2 / 0 / −0.5 / −1 over 10 seeds (docs/shield_ppo.md)
    "gated_search": {"online_td": False, "recovery_weight": 0.2, "delta": -0.5},
}
#: ``shield_ppo.gate`` -> the critic's bootstrap (``CriticConfig.target``)
GATE_TARGET = {"d1": "policy_mean", "selective": "best"}
#: the methods that train with a (warm-started) safety critic
CRITIC_METHODS = ("gated", "penalty")
#: the runs whose policy and critic are an env's ShieldVLA model (registered as ``shield_{policy,critic}_<env>``,
#: copied to ``models/shield/ppo/<env>``, drawn in the safe-set figure): the first of them the env's matrix runs
MODEL_RUNS = ("gated", "gated_search")
#: an env's runs when ``shield_ppo.runs`` does not name it
DEFAULT_RUNS = ("ppo", "ppo_lag", "gated")


def env_runs(cfg: ShieldPPOConfig, env: str) -> list[str]:
    """The runs of ``env``'s matrix (``shield_ppo.runs``, :data:`DEFAULT_RUNS` when it does not name the env)."""
    return list(cfg.runs.get(env, DEFAULT_RUNS))


#: the runs with the ground-truth margin whose critic is the reference panel of the safe-set figure: the first of them
#: the env's matrix runs
REFERENCE_RUNS = ("gated_gt", "gated_oracle_recovery", "gated_oracle")


def first_run(preference: Iterable[str], runs: Iterable[str]) -> str | None:
    """The first run of ``preference`` among ``runs`` (None when none of them ran)."""
    names = set(runs)
    return next((r for r in preference if r in names), None)


def model_run(runs: Iterable[str]) -> str | None:
    """The run of :data:`MODEL_RUNS` that is the ShieldVLA model among ``runs`` (None when none of them ran)."""
    return first_run(MODEL_RUNS, runs)


def reference_run(runs: Iterable[str]) -> str | None:
    """The run of :data:`REFERENCE_RUNS` whose critic is the safe-set figure's GT panel (None when none ran)."""
    return first_run(REFERENCE_RUNS, runs)


def ppo_config(cfg: ShieldPPOConfig, env: str, run: str, seed: int, delta: float | None = None) -> Any:
    """Table 14 for ``env``, the run's own settings (:data:`RUN_PPO`, :data:`RUN_CRITIC`) and the CPU overrides, as a
    ``PPOConfig`` for one run; ``critic_*`` keys go to the critic's config. A run's PPO settings override Table 14's
    row (``gated_search``'s δ is in its margin's units) and yield to the CPU overrides; its critic defaults yield to
    both."""
    from .critic import CriticConfig
    from .ppo import PPOConfig

    method, margin, update, gate = RUNS[run]
    table, cpu = cfg.hyper.get(env, {}), (cfg.cpu.get(env, {}) if cfg.budget == "cpu" else {})
    merged = {**table, **cpu}
    critic = {**RUN_CRITIC.get(run, {}), **{k[len("critic_"):]: v for k, v in merged.items() if k.startswith("critic_")}}
    critic["target"] = GATE_TARGET[gate or cfg.gate]
    ppo = {**{k: v for k, v in table.items() if not k.startswith("critic_")}, **RUN_PPO.get(run, {}),
           **{k: v for k, v in cpu.items() if not k.startswith("critic_")}}
    if "hidden" in critic:
        critic["hidden"] = tuple(critic["hidden"])
    if delta is not None:
        ppo["delta"] = float(delta)
    return PPOConfig(method=method, margin=margin, safety_update=update or cfg.safety_update,  # type: ignore[arg-type]
                     critic=CriticConfig(**critic), seed=seed, **ppo)


def conditions(cfg: ShieldPPOConfig, run: str, delta: float | None) -> list[str]:
    """In-distribution always; the OOD perturbations for ``ood_runs`` (not for the δ sweep's extra runs)."""
    return ["in", *cfg.ood] if run in cfg.ood_runs and delta is None else ["in"]


def run_tag(run: str, seed: int, delta: float | None) -> str:
    return f"{run}" + (f"-delta{delta:g}" if delta is not None else "") + f"-seed{seed}"


@dataclass(frozen=True)
class EnvInputs:
    """One env's inputs: the BC policy dir, its rollouts (``rollouts.npz``) and the calibration dir (``platt.json``)."""

    env: str
    bc: Path
    rollouts: Path
    calibration: Path

    def files(self) -> list[str]:
        """The input paths whose content keys a stored critic or run (and the manifest names)."""
        return [str(self.bc), str(self.rollouts), str(self.calibration / "platt.json")]


class CriticKey(NamedTuple):
    """Which warm critic a run trains from: its margin source, its bootstrap target and its warm-up kind."""

    margin: str
    target: str
    warmup: str = "td"

    @property
    def name(self) -> str:
        """``margin/target`` (``margin/target/distill`` for the oracle warm-up): the gate check's and directory name."""
        return "/".join(self if self.warmup != "td" else self[:2])

    @classmethod
    def of(cls, run: str, critic: Any) -> CriticKey:
        return cls(RUNS[run][1], critic.target, critic.warmup)


@dataclass(frozen=True)
class Job:
    """One training run: (run, seed, δ: None for the stage default), and the key of its warm critic."""

    run: str
    seed: int
    delta: float | None
    critic: CriticKey | None


@dataclass(frozen=True)
class Plan:
    """What one env's stage run does: one warm critic per (margin source, critic target) the runs use, in the
    order the runs first need them (each checked at ``deltas[key]``, the δ of the first run that needs it, before
    any PPO step), then the jobs: every (run, seed) of ``shield_ppo.runs`` seed-major, then the δ sweep's extra runs
    of ``shield_ppo.sweep_run`` (one per δ other than the run's own, per seed)."""

    critics: dict[CriticKey, Any]
    deltas: dict[CriticKey, float]
    jobs: list[Job]


def plan(cfg: ShieldPPOConfig, env: str) -> Plan:
    runs = env_runs(cfg, env)
    seeds = list(cfg.seeds.get(env, [0]))
    sweep = [float(d) for d in cfg.delta_sweep.get(env, [])]
    if sweep and (cfg.sweep_run not in RUNS or RUNS[cfg.sweep_run][0] not in CRITIC_METHODS):
        raise ValueError(f"shield_ppo.sweep_run: {cfg.sweep_run!r} is not a run with a safety critic; one of "
                         f"{sorted(r for r, v in RUNS.items() if v[0] in CRITIC_METHODS)}")
    critics: dict[CriticKey, Any] = {}
    deltas: dict[CriticKey, float] = {}
    default_delta = ppo_config(cfg, env, cfg.sweep_run, 0).delta if sweep else None
    for run in runs + ([cfg.sweep_run] if sweep else []):
        if RUNS[run][0] not in CRITIC_METHODS:
            continue
        pcfg = ppo_config(cfg, env, run, 0)
        key = CriticKey.of(run, pcfg.critic)
        critics.setdefault(key, pcfg.critic)
        deltas.setdefault(key, pcfg.delta)
    pairs: list[tuple[str, int, float | None]] = [(r, s, None) for s in seeds for r in runs]
    pairs += [(cfg.sweep_run, s, d) for d in sweep if d != default_delta for s in seeds]
    jobs = []
    for run, seed, delta in pairs:
        key = CriticKey.of(run, ppo_config(cfg, env, run, seed).critic) if RUNS[run][0] in CRITIC_METHODS else None
        jobs.append(Job(run, seed, delta, key))
    return Plan(critics, deltas, jobs)


def rollout_margins(source: Any, rollouts: Path) -> tuple[Any, Any]:
    """The BC rollouts and ℓ of every frame from the margin ``source`` (in chunks of 2048 frames)."""
    import numpy as np

    from ..policy.rollouts import RolloutSet

    rs = RolloutSet.load(rollouts)
    frames, gt_m, gt_c = np.asarray(rs.frames), np.asarray(rs.margin), np.asarray(rs.cost)
    return rs, np.concatenate([source(frames[i:i + 2048], gt_m[i:i + 2048], gt_c[i:i + 2048])
                               for i in range(0, len(frames), 2048)])


def warm_start_critic(env: str, policy: Any, rs: Any, ell: Any, critic_cfg: Any, warmup: dict[str, int],
                      source: Any = None) -> tuple[Any, dict[str, Any]]:
    """A critic (a copy of the policy's encoder + a new head) regressed onto ℓ and TD-trained on the BC rollouts
    (:func:`.critic.warm_start`); returns it and what its ``critic.json`` records. On Dubins-VL, ``warmup``'s
    ``branch_steps`` > 0 adds the simulator branches of every ``branch_every``-th frame to the replay
    (:func:`.sim_branches.branched_replay`), their frames scored by the margin ``source`` that gave ``ell``.
    ``critic_cfg.warmup == "distill"``: ``warmup["distill"]`` steps of regression onto action values instead
    (:func:`.distill.distill_warm_start`; ``ell`` is not used): the simulator's exact ones for the ``gt`` source (the
    oracle reference), the rubric search's for the ``rubric`` one."""
    import torch

    if critic_cfg.warmup == "distill":
        from .distill import distill_warm_start

        if "distill" not in warmup:
            raise ValueError("a distilled (oracle) critic needs shield_ppo.warmup.distill: its regression steps")
        return distill_warm_start(env, policy, rs, critic_cfg, int(warmup["distill"]), source=source)

    from .critic import CriticTrainer, SafetyCritic, replay_from_rollouts, warm_start
    from .exits import EXIT_MARGIN

    t0 = time.perf_counter()
    # Dubins-VL ends an unsuccessful episode early only when the car leaves the workspace: a failure to the critic
    exit_margin = EXIT_MARGIN if env == "dubins" else None
    if env == "dubins" and warmup.get("branch_steps", 0) > 0:
        from .sim_branches import branched_replay

        if source is None:
            raise ValueError("warmup.branch_steps > 0 needs the margin source that scores the branch frames")
        buf = branched_replay(rs, ell, source, max_steps(env), warmup["branch_steps"], warmup.get("branch_every", 1),
                              exit_margin=exit_margin)
    else:
        buf = replay_from_rollouts(rs, ell, max_steps(env), exit_margin=exit_margin)
    critic = SafetyCritic.from_policy(policy, critic_cfg)
    trainer = CriticTrainer(critic)

    def mean_action(images: Any, instructions: Any) -> Any:
        with torch.no_grad():
            return policy(images, instructions)[0]

    aux = pose_aux(env, critic, rs, buf.size, warmup) if critic_cfg.pose_aux > 0 else {}
    rows = warm_start(trainer, buf, mean_action, warmup["regress"], warmup["td"], **aux)
    return critic, {"warmup": rows[-1:], "transitions": buf.size, "seconds": time.perf_counter() - t0}


def pose_aux(env: str, critic: Any, rs: Any, transitions: int, warmup: dict[str, int]) -> dict[str, Any]:
    """The warm-up's pose regression (:mod:`.state_aux`) for ``critic``: the replayed states of the BC rollouts'
    frames (:func:`.viability.frame_states`), the pose of each replay transition's ``o``, and
    ``critic.config.pose_aux_states`` jittered states rendered by Dubins-VL's rasteriser (half a critic batch of
    them per step). Dubins-VL only, on the
    rollouts' own replay (the simulator branches have no frame states here)."""
    import numpy as np
    import torch

    from ...envs.control.dubins import render_states
    from .critic import transition_frames
    from .state_aux import PoseAux, jittered_states, pose_targets
    from .viability import frame_states

    if env != "dubins":
        raise ValueError(f"critic pose_aux > 0 needs the frames' simulator states: Dubins-VL only, not {env!r}")
    if warmup.get("branch_steps", 0) > 0:
        raise ValueError("critic pose_aux > 0 with warmup.branch_steps > 0: the branch frames have no states here")
    cfg = critic.config
    states = frame_states(rs)
    cur = transition_frames(np.asarray(rs.frame_episode))
    if len(cur) != transitions:
        raise ValueError(f"pose_aux: {len(cur)} rollout transitions, the replay has {transitions}")
    extra, src = jittered_states(states, np.arange(len(states)), cfg.pose_aux_states, seed=0)
    words = rs.frame_instructions()
    aux = PoseAux(critic.feature_dim, cfg.pose_aux, torch.as_tensor(render_states(extra)),
                  [words[k] for k in src], pose_targets(extra), batch=cfg.batch_size // 2, lr=cfg.lr)
    return {"aux": aux, "aux_targets": pose_targets(states[cur])}


def train_and_store(env: str, policy: Any, source: Any, pcfg: Any, out: Path, *, critic: Any = None,
                    eval_episodes: int, conds: list[str], select_every: int = 0, select_episodes: int = 0,
                    time_budget: float | None = None, log: Any = None, progress: Any = print,
                    extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ShieldVLA training run end to end, the one function the ``shield_ppo`` stage and the GPU study script
    call: PPO / PPO-Lagrangian / gated PPO (:func:`.ppo.train`) from ``policy`` with ``critic`` on ``source``'s
    margins, stopped at ``time_budget`` seconds when given; the deterministic policy evaluated on ``eval_episodes``
    held-out episodes under ``conds``; with ``select_every > 0`` the validated checkpoint (the best iterate on
    ``select_episodes`` validation episodes, :mod:`.select`) read on the same test episodes; the policy, critic,
    validated policy and ``result.json`` stored in ``out``, published whole (a scratch folder, then a rename).

    ``log(metrics, iteration)`` receives every iteration's training metrics; ``extra`` is merged into the result
    row (run name, seed, device...). Returns the row, as written to ``out/result.json``."""
    from ...io import replace_dir, scratch_dir, write_json
    from .ppo import train
    from .select import CheckpointSelector

    select = (CheckpointSelector(env, policy, select_every, select_episodes, pcfg.iterations)
              if select_every > 0 else None)

    def on_iteration(m: dict[str, float], it: int) -> None:
        if log is not None:
            log(m, it)
        if select is not None:
            select(it)

    res = train(policy, env, source, pcfg, critic=critic, log=on_iteration, progress=progress, time_budget=time_budget)
    ev = evaluate_conditions(env, res.policy, eval_episodes, conds)
    steps = int(res.history[-1]["env_steps"]) if res.history else 0
    row: dict[str, Any] = {"env": env, "method": pcfg.method, "margin": pcfg.margin,
                           "safety_update": pcfg.safety_update, "delta": pcfg.delta, "eval": ev,
                           "history": res.history, "train_seconds": sum(r["seconds"] for r in res.history),
                           "steps": steps, "target_steps": pcfg.total_steps, "iterations": len(res.history),
                           "stopped_by_time_budget": steps < pcfg.iterations * pcfg.batch, **(extra or {})}
    tmp = scratch_dir(out)
    res.policy.save(tmp / "policy")
    if res.critic is not None:
        res.critic.save(tmp / "critic")
    if select is not None:
        if not select.curve or select.curve[-1]["iteration"] != len(res.history):  # stopped by the time budget
            select.evaluate(len(res.history))
        row["selected"], chosen = select.finish(ev["in"], eval_episodes)
        if chosen is not res.policy:
            chosen.save(tmp / "policy_selected")
    write_json(tmp / "result.json", row)
    replace_dir(tmp, out)
    return row
