"""Stage ``rollouts``: the actor's own rollouts at several temperatures, shard = (task, temperature).

    python -m flows.rollouts                 # run every missing or failed shard
    python -m flows.rollouts --retry-failed  # run only shards recorded as failed

Shards are grouped by temperature into chunks of ``chunk_size`` so each decision step is one
batched actor call; each chunk is a Prefect task with a retry, run in this process or on a Dask /
Ray cluster (``task_runner``, ``tasks/runners.py``). A shard's trajectory is written
atomically to ``data/rollouts/shards/<content hash>.json``; a crashed shard (simulator crash,
endpoint failure) to ``data/rollouts/failed/``. The flow finishes with the failed shards listed;
re-running it completes exactly those. Metrics: ``data/rollouts_metrics.json``.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from embodied_safety.actors.load import actor_id
from embodied_safety.config.rollouts import RolloutsConfig
from embodied_safety.config.shared import ActorConfig
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.io import write_json
from embodied_safety.manifest import write_manifest
from embodied_safety.rollout.collect import Progress, chunks, rollout_metrics, shard_specs
from embodied_safety.rollout.runner import RolloutSettings
from embodied_safety.rollout.shards import ShardStore
from flows._stage import Arg, Out, Stage
from tasks.actors import rollout_chunk_task
from tasks.runners import map_shards, with_runner
from tasks.tracking import resolve_actor

SPLITS = Path("data/household/splits")
OUT = Path("data/rollouts")
METRICS = Path("data/rollouts_metrics.json")


@flow(name="rollouts", log_prints=True)
def rollouts(cfg: RolloutsConfig = RolloutsConfig(), splits: Path = SPLITS, out: Path = OUT,
             metrics_path: Path = METRICS, retry_failed: bool = False) -> dict[str, object]:
    logger = get_run_logger()
    actor_cfg = resolve_actor(ActorConfig(**cfg.actor))  # a registry URI (models:/actor@champion) -> its local dir
    settings = RolloutSettings(cfg.max_steps, 10, cfg.max_fails_per_step, cfg.stall_window, cfg.reject_repeats, cfg.observation)
    aid = actor_id(actor_cfg)
    specs = []
    for split in cfg.splits:
        compiled, failures = load_task_dir(splits / split)
        for f in failures:
            logger.warning(f"task not loaded: {f.path}: {f.field}: {f.error}")
        specs += shard_specs(compiled, split, cfg.temperatures, cfg.seed, aid, settings)
    store = ShardStore(out)
    pending = [s for s in specs if (store.failure(s) is not None if retry_failed else not store.done(s))]
    logger.info(f"{len(specs)} shards, {len(specs) - len(pending)} already done, {len(pending)} to run")
    progress = Progress(len(pending), logger.info)
    calls = [(g, splits, actor_cfg, settings, out, cfg.fault_rate, cfg.seed, cfg.worker_fault_rate)
             for g in chunks(pending, cfg.chunk_size)]
    map_shards(rollout_chunk_task.with_options(retries=cfg.chunk_retries), calls, cfg,
               done=lambda args, result: progress.advance(len(args[0]), result["failed"]))
    store.prune(specs)
    failed = [store.failure(s) for s in specs if not store.done(s)]
    metrics: dict[str, object] = dict(rollout_metrics(store.load(specs), cfg.temperatures))
    metrics.update({"rollouts/shards_total": len(specs), "rollouts/shards_failed": len(failed)})
    write_manifest(out, cfg, inputs=[splits / s for s in cfg.splits], extra={"actor": aid})
    write_json(metrics_path, {**metrics, "failed_shards": [f for f in failed if f]})
    for f in failed:
        if f:
            logger.warning(f"failed shard {f['shard_id']} ({f['task']} T={f['temperature']}): {f['error']}")
    print(" ".join(f"T={t}: SR {metrics.get(f'rollouts/t{t}/sr', 0):.3f} SSR {metrics.get(f'rollouts/t{t}/ssr', 0):.3f}"
                   for t in cfg.temperatures) + f"; failed shards: {len(failed)}")
    return metrics


STAGE = Stage("rollouts", rollouts, config=RolloutsConfig, wrap=with_runner,
              inputs={"splits": str(SPLITS), "actor": "models/bootstrap_actor"},
              outs=(Out(str(OUT), persist=True),),  # shards are content-keyed: a re-run completes missing / failed ones
              metrics=str(METRICS),
              args=(Arg(("--retry-failed",), {"action": "store_true", "help": "run only the shards recorded as failed"}),))
main = STAGE.main

if __name__ == "__main__":
    main()
