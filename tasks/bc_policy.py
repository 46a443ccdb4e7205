"""Prefect task of the ``bc_policy`` stage: BC (+ DAgger with the scripted expert) for one env, evaluated.

Episode seeds (all ``episode_seed(seed + base, i)``, disjoint from the demos' base ``seed`` and the rollouts'
``2``): ``EVAL_BASE`` = the held-out evaluation reported in the metrics (never used to choose anything),
``SELECT_BASE`` = the closed-loop evaluation that picks the checkpoint (``select_by: sr``) and draws the curve,
``DAGGER_BASE`` = the episodes DAgger rolls out and relabels.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config.bc_policy import BCPolicyConfig
from embodied_safety.io import without_run_facts, write_json
from embodied_safety.threads import set_torch_threads
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

EVAL_BASE = 1000
SELECT_BASE = 1100
DAGGER_BASE = 1200


@task(name="train-bc", cache_policy=NO_CACHE, log_prints=True)
def train_bc_task(env: str, demos_path: Path, cfg: BCPolicyConfig, out: Path) -> dict[str, float]:
    import torch

    from embodied_safety.shield.envs import ENVS, env_factories
    from embodied_safety.shield.policy.bc import train_bc
    from embodied_safety.shield.policy.dagger import batch_expert, dagger
    from embodied_safety.shield.policy.demos import DemoSet, episode_seeds, scripted_expert
    from embodied_safety.shield.policy.rollouts import evaluate_policy
    from embodied_safety.shield.policy.visuomotor import policy_for_env

    set_torch_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    make_env, make_vec = env_factories(env)
    probe = make_env()
    policy = policy_for_env(probe)
    probe.close()

    def evaluator(base: int, n: int):  # noqa: ANN202
        seeds = episode_seeds(cfg.seed + base, range(n))

        def evaluate(p: object) -> dict[str, float]:
            m = evaluate_policy(make_env, p, seeds, n_envs=64 if make_vec else 8, make_vec=make_vec)  # type: ignore[arg-type]
            return {k: float(v) for k, v in m.items()}

        return evaluate

    select = evaluator(SELECT_BASE, cfg.select_episodes[env]) if make_vec else None
    demos = DemoSet.load(demos_path)
    rounds = cfg.dagger_rounds.get(env, 0)
    kw = {"batch_size": cfg.batch_size, "lr": cfg.lr, "seed": cfg.seed, "shift": cfg.shift, "eval_fn": select,
          "eval_every": cfg.eval_every, "select_by": cfg.select_by, "log": log_metrics}
    with mlflow_run(tracking_config(cfg.tracking), f"bc_policy/{env}", {"env": env, **cfg.__dict__}):
        if rounds > 0:
            name = ENVS.get(env, env)
            hist, _ = dagger(policy, demos, scripted_expert(name), rounds=rounds, episodes=cfg.dagger_episodes[env],
                             bc_epochs=cfg.epochs[env], epochs=cfg.dagger_epochs[env], rollout_base=DAGGER_BASE,
                             make_env=make_env, make_vec=make_vec, batch=batch_expert(name) if make_vec else None,
                             beta=cfg.dagger_beta, n_envs=64 if make_vec else 8, **kw)  # type: ignore[arg-type]
        else:
            hist = train_bc(policy, demos, epochs=cfg.epochs[env], **kw)  # type: ignore[arg-type]
        final = {**hist.final(), **{f"eval_{k}": v for k, v in
                                    evaluator(EVAL_BASE, cfg.eval_episodes[env])(policy).items()}}
        if hist.rounds:
            final.update(dagger_rounds=float(rounds), dagger_steps=hist.rounds[-1]["steps"])
        policy.save(out)  # writes the whole dir: the curve and history go in after
        title = f"behaviour cloning{' + DAgger' if hist.rounds else ''}, {env} (checkpoint by {hist.select_by})"
        hist.plot(out / "bc_curve.png", title=title)
        write_json(out / "history.json",  # no wall-clock
                   without_run_facts({"rows": hist.rows, "rounds": hist.rounds, "final": final}))
        log_metrics({f"bc/final/{k}": v for k, v in final.items()})
        log_artifacts([out / "bc_curve.png", out / "history.json"])
    print(f"{env}: best epoch {final['best_epoch']:.0f} (by {hist.select_by}), eval SR {final['eval_sr']:.3f}, "
          f"violation rate {final['eval_violation_rate']:.3f}, {final['total_seconds']:.0f} s")
    return final
