"""The BC (+ DAgger) start of one env, as the ``bc_policy`` stage trains and evaluates it.

One recipe for the stage's task (``tasks/bc_policy.py``: MLflow, files) and for experiments that change a piece of
it (``experiments/bc_keypoints.py``: another image encoder, other ``BCPolicyConfig`` values): BC on the demos, then
``dagger_rounds`` rounds of DAgger with the privileged scripted expert where the env has any, the checkpoint chosen by
``select_by`` on the selection episodes, the chosen policy evaluated on the held-out episodes.

Restarts (:func:`fit_restarts`, ``restarts[env]`` > 1): the recipe is run from ``restarts`` training seeds
(``seed``, ``seed + 1``, …: the initial weights, the minibatch order, the DAgger episodes) and the same rule that
picks a checkpoint within a run picks one run among them, on the *same* selection episodes; every restart is also
evaluated on the same held-out episodes, so the start's spread over training seeds is reported beside the one kept
(one BC seed of four was the worst start, 0.265 against 0.366 ± 0.088; docs/shield_policy.md).

Episode seeds (all ``episode_seed(seed + base, i)`` with the config's ``seed``, disjoint from the demos' base ``seed``
and the rollouts' ``2``): ``EVAL_BASE`` = the held-out evaluation reported in the metrics (never used to choose
anything), ``SELECT_BASE`` = the closed-loop evaluation that picks the checkpoint and the restart and draws the curve,
``DAGGER_BASE`` = the episodes DAgger rolls out and relabels (``train_seed + DAGGER_BASE``: a restart's own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...config.bc_policy import BCPolicyConfig
from .bc import BCHistory, Log, pick_checkpoint
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
              log: Log | None = None, train_seed: int | None = None) -> tuple[BCHistory, dict[str, float]]:
    """Train ``policy`` (in place) on ``demos`` by ``cfg``'s recipe for ``env``; returns the history and the final
    row (the chosen epoch's row, run totals, ``eval_*`` on the held-out episodes, DAgger's round count and steps).
    ``train_seed`` (default ``cfg.seed``) seeds the minibatches and the DAgger episodes; the selection and held-out
    episodes are always ``cfg.seed``'s. The caller seeds torch and sets its threads (the stage:
    ``set_torch_threads(cfg.threads)``, ``torch.manual_seed(train_seed)`` before building the policy)."""
    from ..envs import env_factories, env_name
    from .bc import train_bc
    from .dagger import batch_expert, dagger
    from .demos import scripted_expert

    make_env, make_vec = env_factories(env)
    select = evaluator(env, cfg.seed, SELECT_BASE, cfg.select_episodes[env]) if make_vec else None
    rounds = cfg.dagger_rounds.get(env, 0)
    seed = cfg.seed if train_seed is None else train_seed
    kw: dict[str, Any] = {"batch_size": cfg.batch_size, "lr": cfg.lr, "seed": seed, "shift": cfg.shift,
                          "eval_fn": select, "eval_every": cfg.eval_every, "select_by": cfg.select_by, "log": log}
    if rounds > 0:
        name = env_name(env)
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


#: the per-restart columns of :class:`Restarts`' table: the kept checkpoint's selection row (what the rule reads),
#: then its held-out ``eval_*`` metrics
RESTART_COLUMNS = ("best_epoch", "episodes", "sr", "violation_rate", "csc", "val_loss", "eval_sr", "eval_violation_rate", "eval_csc",
                   "eval_reach_rate", "total_seconds")


@dataclass
class Restarts:
    """What :func:`fit_restarts` returns: the kept policy with its history and final row, and one row per restart
    (``seed`` and :data:`RESTART_COLUMNS`) with the index of the kept one."""

    policy: GaussianPolicy
    history: BCHistory
    final: dict[str, float]
    rows: list[dict[str, float]]
    chosen: int

    def summary(self) -> dict[str, float]:
        """The kept restart's seed and the held-out SR / violation rate over all restarts (mean, sample std)."""
        out = {"restarts": float(len(self.rows)), "restart_seed": self.rows[self.chosen]["seed"]}
        for k in ("eval_sr", "eval_violation_rate", "eval_csc"):
            v = np.asarray([r[k] for r in self.rows], float)
            out[f"restarts_{k}_mean"] = float(v.mean())
            out[f"restarts_{k}_std"] = float(v.std(ddof=1)) if len(v) > 1 else 0.0
        return out

    def plot(self, path: Any, title: str) -> Any:
        """Selection and held-out SR (with violation rates) per restart; the kept one marked."""
        from matplotlib.figure import Figure

        from ...evaluation.plots import save_figure

        fig = Figure(figsize=(5.5, 3.4))
        ax = fig.add_subplot(1, 1, 1)
        x = np.arange(len(self.rows))
        for off, (key, label) in zip((-0.3, -0.1, 0.1, 0.3), (("sr", "SR (selection)"), ("eval_sr", "SR (held out)"),
                                                              ("violation_rate", "violations (selection)"),
                                                              ("eval_violation_rate", "violations (held out)")),
                                      strict=True):
            ax.bar(x + off, [r[key] for r in self.rows], width=0.2, label=label)
        ax.set_xticks(x, [f"seed {int(r['seed'])}" + (" (kept)" if i == self.chosen else "")
                          for i, r in enumerate(self.rows)])
        ax.set_ylabel("rate")
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
        return save_figure(fig, path)


def restart_seeds(cfg: BCPolicyConfig, env: str) -> list[int]:
    """The training seeds of ``env``'s restarts: ``cfg.seed`` and the next ``restarts[env] - 1`` integers."""
    n = int(cfg.restarts.get(env, 1))
    if n < 1:
        raise ValueError(f"bc_policy.restarts.{env} = {n}: expected >= 1")
    return [cfg.seed + k for k in range(n)]


def fit_restarts(env: str, demos: DemoSet, cfg: BCPolicyConfig, log: Log | None = None) -> Restarts:
    """:func:`fit_start` from each of :func:`restart_seeds` (torch seeded with the restart's seed before the policy is
    built), then ``cfg.select_by`` applied to the restarts' kept rows, which are all on the same selection episodes
    (envs without them, or ``select_by: nll``: the first restart, as one run). ``log`` gets a restart's metrics under
    ``restart<seed>/`` when there is more than one."""
    import torch

    runs: list[tuple[GaussianPolicy, BCHistory, dict[str, float]]] = []
    seeds = restart_seeds(cfg, env)
    for s in seeds:
        torch.manual_seed(s)
        policy = new_policy(env)
        run_log = log if log is None or len(seeds) == 1 else (
            lambda m, step, _s=s: log({f"restart{_s}/{k}": v for k, v in m.items()}, step))
        runs.append((policy, *fit_start(env, demos, cfg, policy, log=run_log, train_seed=s)))
    rows = [{"seed": float(s), **{k: float(final.get(k, float("nan"))) for k in RESTART_COLUMNS}}
            for s, (_, _, final) in zip(seeds, runs, strict=True)]
    pick = pick_checkpoint([final for _, _, final in runs], cfg.select_by) if cfg.select_by != "nll" else None
    chosen = 0 if pick is None else pick
    policy, hist, final = runs[chosen]
    return Restarts(policy, hist, final, rows, chosen)
