"""Run a stage flow standalone, or as a child of the ``pipeline`` flow run that launched ``dvc repro``.

``flows.pipeline`` exports ``PIPELINE_PARENT_FLOW_RUN_ID`` / ``PIPELINE_PARENT_TASK_RUN_ID`` to the
``dvc repro`` subprocess; each stage's ``main()`` calls :func:`run_stage`, which pre-creates its flow
run with ``parent_task_run_id`` set (Prefect cannot link a run after creation), so the Prefect UI
shows every stage as a subflow of the pipeline's ``dvc-repro`` task. Without those variables (plain
``dvc repro`` or ``python -m flows.<stage>``) the flow simply runs.
"""

from __future__ import annotations

import os
from typing import Any
from uuid import UUID

PARENT_FLOW = "PIPELINE_PARENT_FLOW_RUN_ID"
PARENT_TASK = "PIPELINE_PARENT_TASK_RUN_ID"


def run_stage(flow_obj: Any, *args: Any, **kwargs: Any) -> Any:
    parent_flow, parent_task = os.environ.get(PARENT_FLOW), os.environ.get(PARENT_TASK)
    if not parent_flow or not parent_task:
        return flow_obj(*args, **kwargs)
    from prefect import tags
    from prefect.client.orchestration import get_client
    from prefect.flow_engine import run_flow
    from prefect.states import Pending

    params = flow_obj.serialize_parameters(_bind(flow_obj, args, kwargs))
    with tags("dvc-stage", f"parent-flow-run:{parent_flow}"), get_client(sync_client=True) as client:
        run = client.create_flow_run(flow_obj, parameters=params, parent_task_run_id=UUID(parent_task),
                                     tags=["dvc-stage", f"parent-flow-run:{parent_flow}"], state=Pending())
    return run_flow(flow_obj, flow_run=run, parameters=_bind(flow_obj, args, kwargs))


def _bind(flow_obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    import inspect

    bound = inspect.signature(flow_obj.fn).bind_partial(*args, **kwargs)
    return dict(bound.arguments)


def load_with_rollout_actor(section: str, cls: type, params: str) -> Any:
    """``params``' section as ``cls``; an empty ``actor`` means the rollouts stage's (the base actor)."""
    import dataclasses

    from embodied_safety.config import RolloutsConfig, load_params

    cfg = load_params(section, cls, params)
    if not cfg.actor:
        cfg = dataclasses.replace(cfg, actor=load_params("rollouts", RolloutsConfig, params).actor)
    return cfg
