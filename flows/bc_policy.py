"""Stage ``bc_policy``: behaviour-clone the language-conditioned visuomotor policy in each control env.

Per env: the demos of ``shield_demos`` -> ``train_bc`` (Gaussian NLL, random-shift augmentation, the
epoch with the lowest held-out NLL kept) -> evaluation of the deterministic policy on held-out seeds
(SR = reach with zero violations, reach rate, violation rate, CSC). Outputs
``models/shield/bc/<env>/{config.json, model.safetensors, history.json, bc_curve.png}``,
``models/shield/bc_metrics.json``; one MLflow run per env with the curve.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.config import BCPolicyConfig
from embodied_safety.io import replace_dir, scratch_dir, without_timings, write_json
from embodied_safety.manifest import write_manifest
from flows._shield import BC, DEMOS
from flows._stage import Plot, Stage
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

METRICS = Path("models/shield/bc_metrics.json")
EVAL_BASE = 1000  # evaluation episodes use seeds episode_seed(seed + 1000, i): disjoint from the demos


@task(name="train-bc", cache_policy=NO_CACHE, log_prints=True)
def train_bc_task(env: str, demos_path: Path, cfg: BCPolicyConfig, out: Path) -> dict[str, float]:
    import torch

    from embodied_safety.shield.envs import env_factories
    from embodied_safety.shield.policy.bc import train_bc
    from embodied_safety.shield.policy.demos import DemoSet, episode_seeds
    from embodied_safety.shield.policy.rollouts import evaluate_policy
    from embodied_safety.shield.policy.visuomotor import policy_for_env

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    make_env, make_vec = env_factories(env)
    probe = make_env()
    policy = policy_for_env(probe)
    probe.close()
    seeds = episode_seeds(cfg.seed + EVAL_BASE, range(cfg.eval_episodes[env]))

    def evaluate(p: object) -> dict[str, float]:
        m = evaluate_policy(make_env, p, seeds, n_envs=64 if make_vec else 8, make_vec=make_vec)  # type: ignore[arg-type]
        return {k: float(v) for k, v in m.items()}

    with mlflow_run(tracking_config(cfg.tracking), f"bc_policy/{env}", {"env": env, **cfg.__dict__}):
        hist = train_bc(policy, DemoSet.load(demos_path), epochs=cfg.epochs[env], batch_size=cfg.batch_size,
                        lr=cfg.lr, seed=cfg.seed, eval_fn=evaluate if make_vec else None,
                        eval_every=5, shift=cfg.shift, log=log_metrics)
        final = {**hist.final(), **{f"eval_{k}": v for k, v in evaluate(policy).items()}}
        policy.save(out)  # writes the whole dir: the curve and history go in after
        hist.plot(out / "bc_curve.png", title=f"behaviour cloning, {env}")
        write_json(out / "history.json", without_timings({"rows": hist.rows, "final": final}))  # no wall-clock
        log_metrics({f"bc/final/{k}": v for k, v in final.items()})
        log_artifacts([out / "bc_curve.png", out / "history.json"])
    print(f"{env}: best epoch {final['best_epoch']:.0f}, eval SR {final['eval_sr']:.3f}, "
          f"violation rate {final['eval_violation_rate']:.3f}, {final['total_seconds']:.0f} s")
    return final


@flow(name="bc_policy", log_prints=True)
def bc_policy(cfg: BCPolicyConfig = BCPolicyConfig(), demos: Path = DEMOS, out: Path = BC,
              metrics_path: Path = METRICS) -> dict[str, float]:
    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    for env in cfg.envs:
        final = train_bc_task(env, demos / env / "demos.npz", cfg, tmp / env)
        metrics.update({f"bc/{env}/{k}": v for k, v in final.items()
                        if k.startswith("eval_") or k in ("val_loss", "best_epoch", "total_seconds")})
    write_manifest(tmp, cfg, inputs=[demos / env / "demos.npz" for env in cfg.envs])
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    return metrics


STAGE = Stage("bc_policy", bc_policy, config=BCPolicyConfig, inputs={"demos": str(DEMOS)}, outs=(str(BC),),
              metrics=str(METRICS), plots=(Plot(f"{BC}/dubins/bc_curve.png", x_label="epoch"),))
main = STAGE.main

if __name__ == "__main__":
    main()
