"""Where shard tasks run: in the stage's process, or on a Dask or Ray cluster (``ShardRunnerConfig``).

A stage calls ``with_runner(flow_fn, cfg)`` once and ``map_shards(task, calls, cfg)`` for each group
of shard tasks (rollout chunks, critic-in-the-loop collection shards, judge shards). ``local`` calls
the tasks one after another in the flow's process, where one batched model serves them all; a
cluster runner submits every shard at once and each worker loads its own model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from embodied_safety.config.shared import ShardRunnerConfig
from embodied_safety.errors import require_package


def task_runner(cfg: ShardRunnerConfig) -> Any | None:
    """The Prefect task runner ``cfg`` selects; None for ``local`` (Prefect's default)."""
    if cfg.task_runner == "dask":
        require_package("prefect_dask", "dask")
        from prefect_dask import DaskTaskRunner

        if cfg.runner_address:
            return DaskTaskRunner(address=cfg.runner_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": cfg.runner_workers, "threads_per_worker": 1,
                                              "dashboard_address": None})
    if cfg.task_runner == "ray":
        require_package("prefect_ray", "ray")
        from prefect_ray import RayTaskRunner

        if cfg.runner_address:  # an existing cluster: "auto", "ray://head:10001"
            return RayTaskRunner(address=cfg.runner_address)
        # a local cluster; the repository root (the working directory) is importable on every worker
        return RayTaskRunner(init_kwargs={"num_cpus": cfg.runner_workers, "include_dashboard": False,
                                          "runtime_env": {"env_vars": {"PYTHONPATH": _pythonpath()}}})
    return None


def _pythonpath() -> str:
    return os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH", "")) if p)


def with_runner(flow_fn: Any, cfg: ShardRunnerConfig) -> Any:
    """``flow_fn`` with the task runner ``cfg`` selects (unchanged for ``local``)."""
    runner = task_runner(cfg)
    return flow_fn.with_options(task_runner=runner) if runner is not None else flow_fn


class ShardsFailed(RuntimeError):
    """Some shard tasks failed after their retries; the others finished (and kept their outputs)."""


def map_shards(task_fn: Any, calls: Sequence[tuple[Any, ...]], cfg: ShardRunnerConfig,
               done: Callable[[tuple[Any, ...], Any], None] | None = None) -> list[Any]:
    """Results of ``task_fn(*args)`` for every ``args`` in ``calls``, in order; ``done(args, result)``
    after each that finished (progress). ``local`` runs them one by one; a cluster runner gets them all
    at once. Every shard runs even when another fails (after its Prefect retries); then
    :class:`ShardsFailed` names the failed ones, and the flow run fails with it."""
    from tasks.progress import ProgressArtifact

    bar = ProgressArtifact(len(calls), f"{task_fn.name} tasks")
    if cfg.concurrency_tag:
        task_fn = task_fn.with_options(tags={cfg.concurrency_tag})
    if cfg.task_runner == "local":
        states = []
        for args in calls:
            states.append(task_fn(*args, return_state=True))
            bar.advance()
            if done and states[-1].is_completed():
                done(args, states[-1].result())
    else:
        futures = [task_fn.submit(*args) for args in calls]
        states = []
        for args, fut in zip(calls, futures, strict=True):
            fut.wait()
            states.append(fut.state)
            bar.advance()
            if done and states[-1].is_completed():
                done(args, states[-1].result())
    failed = [st for st in states if not st.is_completed()]
    if failed:
        raise ShardsFailed(f"{len(failed)} of {len(calls)} {task_fn.name} tasks failed after their retries "
                           f"(first: {failed[0].message}); re-run the stage to run only what is missing")
    return [st.result() for st in states]
