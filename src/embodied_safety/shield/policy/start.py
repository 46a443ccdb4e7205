"""The BC (+ DAgger) start of one env, as the ``bc_policy`` stage trains and evaluates it.

One recipe for the stage's task (``tasks/bc_policy.py``: MLflow, files) and for experiments that change a piece of
it (``experiments/bc_keypoints.py``: another image encoder, other ``BCPolicyConfig`` values): BC on the demos, then
``dagger_rounds`` rounds of DAgger with the privileged scripted expert where the env has any, the checkpoint chosen by
``select_by`` on the selection episodes, the chosen policy evaluated on the held-out episodes.

Episode seeds (all ``episode_seed(seed + base, i)``, disjoint from the demos' base ``seed`` and the rollouts' ``2``):
``EVAL_BASE`` = the held-out evaluation reported in the metrics (never used to choose anything), ``SELECT_BASE`` = the
closed-loop evaluation that picks the checkpoint and draws the curve, ``DAGGER_BASE`` = the episodes DAgger rolls out
and relabels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...config.bc_policy import BCPolicyConfig
from .bc import BCHistory, Log
from .demos import DemoSet
from .visuomotor import GaussianPolicy

EVAL_BASE = 1000
SELECT_BASE = 1100
DAGGER_BASE = 1200


def evaluator(env: str, seed: int, base: int, n: int) -> Callable[[Any], dict[str, float]]:
    """The deterministic policy on ``episode_seeds(seed + base, range(n))`` of ``env`` (vectorised where it can be)."""
    from ..envs import env_factories
    from .demos import episode_seeds
    from .rollouts import evaluate_policy

    make_env, make_vec = env_factories(env)
    seeds = episode_seeds(seed + base, range(n))

    def evaluate(p: Any) -> dict[str, float]:
        m = evaluate_policy(make_env, p, seeds, n_envs=64 if make_vec else 8, make_vec=make_vec)
        return {k: float(v) for k, v in m.items()}

    return evaluate


def new_policy(env: str) -> GaussianPolicy:
    """A fresh policy sized for ``env``'s observation and action spaces."""
    from ..envs import env_factories
    from .visuomotor import policy_for_env

    probe = env_factories(env)[0]()
    try:
        return policy_for_env(probe)
    finally:
        probe.close()


def fit_start(env: str, demos: DemoSet, cfg: BCPolicyConfig, policy: GaussianPolicy,
              log: Log | None = None) -> tuple[BCHistory, dict[str, float]]:
    """Train ``policy`` (in place) on ``demos`` by ``cfg``'s recipe for ``env``; returns the history and the final
    row (the chosen epoch's row, run totals, ``eval_*`` on the held-out episodes, DAgger's round count and steps).
    The caller seeds torch and sets its threads (the stage: ``set_torch_threads(cfg.threads)``,
    ``torch.manual_seed(cfg.seed)`` before building the policy)."""
    from ..envs import ENVS, env_factories
    from .bc import train_bc
    from .dagger import batch_expert, dagger
    from .demos import scripted_expert

    make_env, make_vec = env_factories(env)
    select = evaluator(env, cfg.seed, SELECT_BASE, cfg.select_episodes[env]) if make_vec else None
    rounds = cfg.dagger_rounds.get(env, 0)
    kw: dict[str, Any] = {"batch_size": cfg.batch_size, "lr": cfg.lr, "seed": cfg.seed, "shift": cfg.shift,
                          "eval_fn": select, "eval_every": cfg.eval_every, "select_by": cfg.select_by, "log": log}
    if rounds > 0:
        name = ENVS.get(env, env)
        hist, _ = dagger(policy, demos, scripted_expert(name), rounds=rounds, episodes=cfg.dagger_episodes[env],
                         bc_epochs=cfg.epochs[env], epochs=cfg.dagger_epochs[env], rollout_base=DAGGER_BASE,
                         make_env=make_env, make_vec=make_vec, batch=batch_expert(name) if make_vec else None,
                         beta=cfg.dagger_beta, n_envs=64 if make_vec else 8, **kw)
    else:
        hist = train_bc(policy, demos, epochs=cfg.epochs[env], **kw)
    final = {**hist.final(), **{f"eval_{k}": v for k, v in
                                evaluator(env, cfg.seed, EVAL_BASE, cfg.eval_episodes[env])(policy).items()}}
    if hist.rounds:
        final.update(dagger_rounds=float(rounds), dagger_steps=hist.rounds[-1]["steps"])
    return hist, final
