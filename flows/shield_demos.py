"""Stage ``shield_demos``: scripted-expert demonstrations in each control env (the BC data of ShieldVLA).

Per env, episodes are cut into shards of ``shard_episodes`` seeds (``tasks/shield.py::demo_shard``, stored by
content key, so a killed run resumes), then concatenated into ``data/shield/demos/<env>/demos.npz`` with
``demos.json`` (episodes, steps, expert SR and violation rate). Metrics: ``data/shield/demos_metrics.json``.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.config.shield_demos import ShieldDemosConfig
from embodied_safety.io import replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from flows._shield import DEMOS, seed_shards
from flows._stage import Stage
from tasks.runners import map_shards, with_runner
from tasks.shield import demo_shard

METRICS = Path("data/shield/demos_metrics.json")


@flow(name="shield_demos", log_prints=True)
def shield_demos(cfg: ShieldDemosConfig = ShieldDemosConfig(), out: Path = DEMOS,
                 metrics_path: Path = METRICS) -> dict[str, float]:
    from embodied_safety.shield.policy.demos import DemoSet

    tmp = scratch_dir(out)
    metrics: dict[str, float] = {}
    for env in cfg.envs:
        calls = [(env, seeds, cfg.noise) for seeds in seed_shards(cfg.seed, cfg.episodes[env], cfg.shard_episodes)]
        paths = map_shards(demo_shard, calls, cfg)
        demos = DemoSet.concat([DemoSet.load(p) for p in paths])
        demos.save(tmp / env / "demos.npz")
        summary = demos.summary()
        metrics.update({f"demos/{env}/{k}": float(v) for k, v in summary.items()})
        print(f"{env}: {summary}")
    write_manifest(tmp, cfg)
    replace_dir(tmp, out)
    write_json(metrics_path, metrics)
    return metrics


STAGE = Stage("shield_demos", shield_demos, config=ShieldDemosConfig, wrap=with_runner, outs=(str(DEMOS),),
              metrics=str(METRICS))
main = STAGE.main

if __name__ == "__main__":
    main()
