"""Stage ``shield_rollouts``: the BC policy's rollouts with frames and per-episode safety bits (§4.2 step i).

Per env, episode seeds are cut into shards (``tasks/shield.py::rollout_shard``, stored by content key), the
stochastic BC policy is rolled out, and the shards are concatenated into
``data/shield/rollouts/<env>/rollouts.npz`` (frames, per-frame ground-truth cost and margin for evaluation
only, the episode bit broadcast as ``label``) with ``rollouts.json``. Metrics:
``data/shield/rollouts_metrics.json`` (violation rate, SR, CSC, frames).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.config.shield_rollouts import ShieldRolloutsConfig
from embodied_safety.io import replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from flows._shield import BC, ROLLOUTS, seed_shards
from flows._stage import Stage
from tasks.runners import map_shards, with_runner
from tasks.shield import rollout_shard

METRICS = Path("data/shield/rollouts_metrics.json")


@flow(name="shield_rollouts", log_prints=True)
def shield_rollouts(cfg: ShieldRolloutsConfig = ShieldRolloutsConfig(), policies: Path = BC, out: Path = ROLLOUTS,
                    metrics_path: Path = METRICS) -> dict[str, float]:
    from embodied_safety.shield.policy.rollouts import RolloutSet

    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    for env in cfg.envs:
        calls = [(env, policies / env, seeds, cfg.deterministic)
                 for seeds in seed_shards(cfg.seed, cfg.episodes[env], cfg.shard_episodes)]
        rollouts = RolloutSet.concat([RolloutSet.load(p, mmap=False) for p in map_shards(rollout_shard, calls, cfg)])
        rollouts.save(tmp / env / "rollouts.npz")
        summary = rollouts.summary()
        metrics.update({f"rollouts/{env}/{k}": float(v) for k, v in summary.items()})
        print(f"{env}: {summary}")
    write_manifest(tmp, cfg, inputs=[policies / env for env in cfg.envs])
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    return metrics


STAGE = Stage("shield_rollouts", shield_rollouts, config=ShieldRolloutsConfig, wrap=with_runner,
              inputs={"policies": str(BC)}, outs=(str(ROLLOUTS),), metrics=str(METRICS))
main = STAGE.main

if __name__ == "__main__":
    main()
