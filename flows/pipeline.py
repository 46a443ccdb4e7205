"""The whole DAG as one Prefect flow: ``dvc repro`` then ``dvc push`` (the nightly deployment).

    python -m flows.pipeline                   # repro everything, push to the default remote
    python -m flows.pipeline --stage rollouts  # repro one stage (and what it needs)

Each DVC stage runs ``python -m flows.<stage>``; ``flows._stage.run_stage`` makes it a child flow run
of this flow's ``dvc-repro`` task, so the Prefect UI shows one parent with a subflow per stage.
Export ``PREFECT_API_URL`` (``make server`` prints it): without a server every stage process starts
its own temporary one (FIELD_NOTES: ~5-9 s each).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from prefect import flow, get_run_logger, runtime, task
from prefect.cache_policies import NO_CACHE

from flows._stage import PARENT_FLOW, PARENT_TASK


@task(name="dvc-repro", cache_policy=NO_CACHE)
def dvc_task(args: list[str]) -> str:
    """``dvc <args>`` in the repository root; stages launched by it link to this task run."""
    env = {**os.environ, PARENT_FLOW: str(runtime.flow_run.id), PARENT_TASK: str(runtime.task_run.id)}
    env.pop("PREFECT__FLOW_RUN_ID", None)  # the stage processes get their own flow runs
    proc = subprocess.run([sys.executable, "-m", "dvc", *args], env=env, capture_output=True, text=True)
    log = get_run_logger()
    for line in (proc.stdout + proc.stderr).splitlines()[-40:]:
        log.info(line)
    if proc.returncode:
        raise RuntimeError(f"dvc {' '.join(args)} exited with {proc.returncode}")
    return proc.stdout


@flow(name="pipeline", log_prints=True)
def pipeline(stages: list[str] | None = None, push: bool = True) -> dict[str, bool]:
    dvc_task(["repro", *(stages or [])])
    pushed = False
    if push:
        dvc_task.with_options(name="dvc-push")(["push", *(stages or [])])
        pushed = True
    return {"reproduced": True, "pushed": pushed}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", action="append", dest="stages", help="repro only this stage (repeatable)")
    parser.add_argument("--no-push", action="store_true")
    args = parser.parse_args(argv)
    pipeline(args.stages, push=not args.no_push)


if __name__ == "__main__":
    main()
