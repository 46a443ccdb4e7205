"""The ``shield_ppo`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.control_envs import ENV_KEYS, env_defaults
from embodied_safety.config.shared import ShardRunnerConfig

WARMUP_KEYS = frozenset({"regress", "td", "branch_steps", "branch_every", "distill"})


@dataclass(frozen=True)
class ShieldPPOConfig(ShardRunnerConfig):
    """``shield_ppo``: the HJ safety critic, gated PPO, baselines and ablations per env (ShieldVLA part 2).

    ``hyper`` holds Table 14 per env verbatim; ``budget: cpu`` applies ``cpu`` on top (the CPU budgets:
    fewer env steps, more critic steps per iteration, a faster target); ``budget: paper`` runs Table 14 as is.
    The training runs (run x seed x δ) are shard tasks: ``task_runner: dask`` with ``runner_workers: N`` trains N at
    once, each in its own process with its own torch threads (the study recipes on 2+ cores); ``local`` (the
    default) one after another. Each run is stored by its content key either way, so the results are the same.
    """

    envs: tuple[str, ...] = ENV_KEYS
    budget: Literal["cpu", "paper"] = "cpu"
    scale: Literal["demo", "study"] = "demo"  # a label in every table: demo = make demo's matrix, study = make shield-study
    hyper: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    cpu: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    runs: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # env -> run names (shield.rl.report.LABELS)
    seeds: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    delta_sweep: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    #: the run the δ sweep re-trains at each ``delta_sweep`` value (its own δ is the sweep's default point; δ is in its
    #: margin's units: a logit for the rubric-search critic, the margin itself for the TD rubric critic)
    sweep_run: str = "gated"
    #: validated checkpoints (``shield.rl.select``): > 0 evaluates every run's deterministic policy every this many
    #: PPO iterations (and the last) on ``select_episodes[env]`` validation episodes and reports the best trained iterate on
    #: the test episodes beside the final one (0: the final iterate only)
    select_every: int = 0
    select_episodes: dict[str, int] = env_defaults("shield_ppo.select_episodes")
    safety_update: Literal["dpg", "advantage", "mixed", "recovery"] = "mixed"
    #: d1: the critic bootstraps from the policy mean (App. D.1; the current policy's safety value);
    #: selective: from the best of the mean and a grid of candidate actions (App. A's HJ value), so the gate
    #: flags only actions that lead somewhere no continuation recovers from (docs/shield_ppo.md)
    gate: Literal["d1", "selective"] = "d1"
    #: the critic's BC warm-up: ``regress`` / ``td`` steps; optional ``branch_steps`` / ``branch_every`` add
    #: Dubins-VL simulator branches to its replay (``shield.rl.sim_branches``; 0 = the BC rollouts only); ``distill``:
    #: the regression steps of the oracle reference critic (``gated_oracle``, ``shield.rl.distill``)
    warmup: dict[str, int] = dataclasses.field(default_factory=lambda: {"regress": 300, "td": 600})
    eval_episodes: dict[str, int] = env_defaults("shield_ppo.eval_episodes")
    ood: tuple[str, ...] = ("color", "light", "all")
    ood_runs: tuple[str, ...] = ("ppo_lag", "gated")
    register: bool = True  # critic + policy of each ShieldVLA run as versions of shield_{policy,critic}_<env>
    tracking: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.warmup) - WARMUP_KEYS
        if unknown or not {"regress", "td"} <= set(self.warmup):
            raise ValueError(f"shield_ppo.warmup: keys {sorted(self.warmup)}; needs regress and td, may have "
                             f"{sorted(WARMUP_KEYS - {'regress', 'td'})}, unknown: {sorted(unknown)}")
