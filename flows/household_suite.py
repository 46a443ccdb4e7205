"""Stage ``household_suite``: generate and validate the default suite, splits and OOD splits.

Writes ``data/household/splits/<split>/{tasks,bddl}`` (IS-Bench layout), a manifest, and
``data/household/metrics.json`` (counts per split, room, risk type, condition kind, trigger kind,
plus the BEHAVIOR-1K coverage figure).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.config.household_suite import HouseholdSuiteConfig
from embodied_safety.evaluation.suite_stats import suite_metrics
from embodied_safety.io import replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from flows._stage import Arg, Stage
from tasks.household import behavior_coverage_task, generate_suite_task, write_split_task

OUT = Path("data/household")


@flow(name="household_suite", log_prints=True)
def household_suite(cfg: HouseholdSuiteConfig = HouseholdSuiteConfig(), out: Path = OUT) -> dict[str, object]:
    splits = generate_suite_task(cfg)
    final = out / "splits"
    tmp = scratch_dir(final)
    for split, tasks in splits.items():
        n = write_split_task(tasks, tmp / split)
        print(f"{split}: {n} tasks")
    metrics: dict[str, object] = dict(suite_metrics(splits))
    if cfg.behavior_coverage:
        cov = behavior_coverage_task()
        write_json(tmp / "behavior_coverage.json", cov)
        metrics.update({k: v for k, v in cov.items() if not isinstance(v, dict)})
    write_manifest(tmp, cfg, extra={"splits": {k: len(v) for k, v in splits.items()}})
    replace_dir(tmp, final)
    write_json(out / "metrics.json", metrics)
    print(f"suite: {metrics['data/tasks_total']} tasks from {metrics['data/templates']} templates -> {final}")
    return metrics


STAGE = Stage("household_suite", household_suite, config=HouseholdSuiteConfig,
              outs=("data/household/splits",), metrics="data/household/metrics.json",
              args=(Arg(("--out",), {"type": Path, "default": OUT, "help": "where splits/ and metrics.json go"}),))
main = STAGE.main

if __name__ == "__main__":
    main()
