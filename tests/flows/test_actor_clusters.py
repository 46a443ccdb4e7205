"""Rollout, critic and judge shards on a local Dask / Ray cluster give what the local runner gives."""

import contextlib
import os
from collections.abc import Iterator
from unittest import mock

import pytest

pytest.importorskip("trl")

from embodied_safety.config.rollouts import RolloutsConfig

pytestmark = pytest.mark.slow


def run_stages(runner, tiny_actor, small_suite, out, address=None):
    """rollouts then branches with ``runner`` (on the cluster at ``address``, if given): (metrics, funnel stats,
    shard file names, final pairs)."""
    from embodied_safety.config.branches import BranchesConfig
    from flows.branches import branches
    from flows.rollouts import rollouts
    from tasks.runners import with_runner

    root, _, _ = tiny_actor
    actor = {"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8}
    cfg = RolloutsConfig(temperatures=(0.0, 0.7), max_steps=3, chunk_size=16, task_runner=runner, runner_workers=2,
                         runner_address=address, actor=actor)
    metrics = with_runner(rollouts, cfg)(cfg, small_suite, out / "r", out / "m.json")
    bcfg = BranchesConfig(temperatures=(0.0, 1.0), max_steps=6, max_repair_attempts=2, task_runner=runner,
                          runner_workers=2, runner_address=address, actor=actor)
    stats = with_runner(branches, bcfg)(bcfg, small_suite, out / "r", out / "b")
    return (metrics, stats, sorted(p.name for p in (out / "r" / "shards").glob("*.json")),
            (out / "b" / "final" / "pairs.jsonl").read_text())


@pytest.fixture(scope="module")
def local_run(tiny_actor, small_suite, tmp_path_factory):
    """The in-process reference, computed once for both clusters."""
    return run_stages("local", tiny_actor, small_suite, tmp_path_factory.mktemp("local"))


@contextlib.contextmanager
def local_cluster(runner: str) -> Iterator[str | None]:
    """One 2-worker cluster for both stages (starting one costs more than the shards it runs): Dask's by its
    scheduler address (``runner_address``); Ray's initialised in this process, which ``RayTaskRunner`` then uses
    (and leaves running)."""
    if runner == "dask":
        from distributed import LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
            yield cluster.scheduler_address
        return
    import ray

    from tasks.runners import _pythonpath

    # Ray starts its workers at nice 15: beside another busy process (the other pytest worker) they got so little CPU
    # that this test took 54-481 s in `make test` (23 s alone); at nice 0, 28 s instead of 53 s beside a `make demo`
    with mock.patch.dict(os.environ, {"RAY_worker_niceness": "0"}):
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": _pythonpath()}})
    try:
        yield None
    finally:
        ray.shutdown()


@pytest.mark.parametrize("runner", ["dask", "ray"])
def test_shards_on_a_local_cluster_match_the_local_runner(runner, local_run, tiny_actor, small_suite, tmp_path):
    """Rollout chunks, critic-in-the-loop collection shards and judge shards as Prefect tasks on a
    2-worker local Dask / Ray cluster: the same trajectories, metrics and funnel as in-process."""
    pytest.importorskip(f"prefect_{runner}")
    with local_cluster(runner) as address:
        cluster = run_stages(runner, tiny_actor, small_suite, tmp_path / runner, address)
    assert cluster[0]["rollouts/shards_failed"] == 0
    assert len(cluster[2]) == cluster[0]["rollouts/shards_total"] > 16
    assert cluster == local_run
