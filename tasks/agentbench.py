"""Prefect task for SafeAgentBench: one (planner, task type) shard, persisted under its content key.

A finished shard is a JSON file named by the hash of everything that determines it (planner spec, the
task ids, judges, settings, and the code of the world, planners and judges), written atomically. A re-run
(``dvc repro`` after a kill, a Prefect retry) loads finished shards and runs only the missing ones; an
endpoint that keeps failing leaves ``failed/<key>.json`` with the error, and the stage fails after the
other shards finished (``tasks.runners.map_shards``), to be retried later.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from embodied_safety.agentbench.run import ShardResult, run_shard
from embodied_safety.config.agentbench_eval import AgentBenchEvalConfig
from embodied_safety.config.shared import ActorConfig
from embodied_safety.envs.agentbench.dataset import BenchTask
from embodied_safety.io import read_json, write_json
from embodied_safety.manifest import hash_path
from tasks.actors import cached_actor
from tasks.store import content_key, source_hash


@cache
def _model_hash(model: str) -> str:
    return hash_path(model)[:16] if Path(model).exists() else model


def actor_key(fields: dict[str, Any]) -> dict[str, Any]:
    """The actor as it enters a shard key: a local model dir by content, an endpoint by URL and name."""
    cfg = ActorConfig(**fields)
    return {**fields, "model": _model_hash(cfg.model)} if cfg.backend == "hf" else fields


def _row_content(task: BenchTask) -> dict[str, Any]:
    """What decides a task's episode: everything loaded from its row but where the row came from."""
    return {k: v for k, v in task.to_json().items() if k != "source"}


def shard_key(planner: str, tasks: list[BenchTask], cfg: AgentBenchEvalConfig) -> str:
    """The stored shard's key: the rows' content (never their index: two data folders with the same row counts
    must not share results), the planner and what it wraps, the judges and the world's code."""
    specs = {}
    name: str | None = planner
    while name:  # the planner and what it wraps
        spec = dict(cfg.planner_specs[name])
        if "actor" in spec:
            spec["actor"] = actor_key(spec["actor"])
        specs[name] = spec
        name = spec.get("inner")
    blob = {"planner": planner, "specs": specs, "tasks": [_row_content(t) for t in tasks], "judges": list(cfg.judges),
            "judge_actor": actor_key(cfg.judge_actor) if "llm" in cfg.judges else None,
            "judge_retries": cfg.judge_retries, "max_steps": cfg.max_steps, "react_max_steps": cfg.react_max_steps,
            "temperature": cfg.temperature, "seed": cfg.seed,
            "code": source_hash("agentbench", "envs/agentbench")}
    return content_key(blob)


def load_actor_fields(fields: dict[str, Any]) -> Any:
    return cached_actor(ActorConfig(**fields))


@task(name="agentbench-shard", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def agentbench_shard(planner: str, task_type: str, tasks: list[BenchTask], cfg: AgentBenchEvalConfig,
                     store: Path) -> tuple[ShardResult, bool]:
    """(result, reused): the stored shard when its key is done, else plan + execute + judge and store it."""
    key = shard_key(planner, tasks, cfg)
    done, failed = store / "shards" / f"{key}.json", store / "failed" / f"{key}.json"
    if done.is_file():
        return ShardResult.from_json(read_json(done)), True
    try:
        result = run_shard(planner, cfg.planner_specs, tasks, load_actor_fields, cfg.judges, cfg.judge_actor,
                           cfg.judge_retries, cfg.max_steps, cfg.react_max_steps, cfg.temperature, cfg.seed)
    except Exception as exc:
        attempts = read_json(failed)["attempts"] + 1 if failed.is_file() else 1
        write_json(failed, {"planner": planner, "task_type": task_type, "error": f"{type(exc).__name__}: {exc}",
                            "attempts": attempts})
        raise
    write_json(done, result.to_json())
    failed.unlink(missing_ok=True)
    return result, False
