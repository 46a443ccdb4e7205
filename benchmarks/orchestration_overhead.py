"""Orchestration overhead: the rollout stage through Prefect vs the library on the same shards.

Both write every shard of the default train split at the default temperatures into fresh stores:
``collect_chunk`` over the same chunks in a plain loop (baseline), and the ``rollouts`` flow (a
Prefect flow run, one task run per chunk). Both are timed with the API server already up
(``PREFECT_API_URL`` set, or a temporary server started and warmed first), interleaved
``--repeats`` times; the medians give the figure, the per-run / per-task cost a user pays. Target
(issue 6): <= 10 % overhead.

    python benchmarks/orchestration_overhead.py [--params params.yaml] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # flows/ and tasks/ live at the repo root
import tasks  # noqa: E402, F401  (environment defaults)
from embodied_safety.actors.load import actor_id, load_actor
from embodied_safety.config.params import load_params
from embodied_safety.config.rollouts import RolloutsConfig
from embodied_safety.config.shared import ActorConfig
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.io import write_json
from embodied_safety.rollout.collect import chunks, collect_chunk, shard_specs
from embodied_safety.rollout.runner import RolloutSettings
from embodied_safety.rollout.shards import ShardStore

SPLITS = Path("data/household/splits")


def direct(cfg: RolloutsConfig, out: Path) -> tuple[float, int]:
    actor_cfg = ActorConfig(**cfg.actor)
    actor = load_actor(actor_cfg)
    settings = RolloutSettings(cfg.max_steps, 10, cfg.max_fails_per_step, cfg.stall_window, cfg.reject_repeats, cfg.observation)
    t0 = time.perf_counter()
    specs, by_name = [], {}
    for split in cfg.splits:
        compiled, _ = load_task_dir(SPLITS / split)
        by_name.update({c.name: c for c in compiled})
        specs += shard_specs(compiled, split, cfg.temperatures, cfg.seed, actor_id(actor_cfg), settings)
    store = ShardStore(out)
    for group in chunks(specs, cfg.chunk_size):
        collect_chunk(group, {s.task: by_name[s.task] for s in group}, actor, settings, store, None)
    return time.perf_counter() - t0, len(specs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/orchestration_overhead.json"))
    args = parser.parse_args()
    cfg = load_params("rollouts", RolloutsConfig, args.params)
    directs, flows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        server = contextlib.nullcontext()
        if not os.environ.get("PREFECT_API_URL"):
            from prefect.testing.utilities import prefect_test_harness

            server = prefect_test_harness(server_startup_timeout=60)
        with server:
            from flows.rollouts import rollouts

            rollouts(RolloutsConfig(**{**cfg.__dict__, "temperatures": cfg.temperatures[:1]}), SPLITS, Path(tmp) / "warm",
                     Path(tmp) / "warm.json")  # warm-up: API, model load, imports
            for i in range(args.repeats):
                t_direct, n = direct(cfg, Path(tmp) / f"direct{i}")
                directs.append(t_direct)
                t0 = time.perf_counter()
                rollouts(cfg, SPLITS, Path(tmp) / f"flow{i}", Path(tmp) / "flow.json")
                flows.append(time.perf_counter() - t0)
                print(f"repeat {i}: library {t_direct:.1f} s, Prefect flow {flows[-1]:.1f} s", flush=True)
    t_direct, t_flow = statistics.median(directs), statistics.median(flows)
    result = {"shards": n, "chunks": -(-n // cfg.chunk_size), "direct_s": [round(t, 2) for t in directs],
              "prefect_s": [round(t, 2) for t in flows], "overhead": round(t_flow / t_direct - 1, 4)}
    write_json(args.out, result)
    print(f"{n} shards, medians of {args.repeats}: library {t_direct:.1f} s, Prefect flow {t_flow:.1f} s -> overhead {100 * result['overhead']:+.1f} % "
          f"(target <= 10 %)")


if __name__ == "__main__":
    main()
