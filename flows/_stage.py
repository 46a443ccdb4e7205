"""A stage is a declaration: what it reads and writes, and the flow that computes it; one envelope runs it.

Every stage module ends with ::

    STAGE = Stage("rollouts", flow=rollouts, config=RolloutsConfig,
                  inputs={"splits": "data/household/splits", "actor": "models/bootstrap_actor"},
                  outs=(Out("data/rollouts", persist=True),), metrics="data/rollouts_metrics.json", ...)
    main = STAGE.main

and ``python -m flows.<stage>`` calls ``main()``, the envelope: the CLI (``--params`` and the stage's declared
extra arguments), the ``params.yaml`` section(s) loaded into their frozen dataclasses, the declared inputs
passed to the flow's parameters of the same name, the Prefect parent link (:func:`run_stage`) and a check that
the declared metrics file was written. ``flows/stages.py`` lists the stages and writes ``dvc.yaml`` from these
declarations (deps = declared inputs + the import closure of the stage's code, :mod:`embodied_safety.codekey`).

The parent link: ``flows.pipeline`` exports ``PIPELINE_PARENT_FLOW_RUN_ID`` / ``PIPELINE_PARENT_TASK_RUN_ID``
to the ``dvc repro`` subprocess; :func:`run_stage` pre-creates the stage's flow run with ``parent_task_run_id``
set (Prefect cannot link a run after creation), so the Prefect UI shows every stage as a subflow of the
pipeline's ``dvc-repro`` task. Without those variables (plain ``dvc repro`` or ``python -m flows.<stage>``) the
flow simply runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

PARENT_FLOW = "PIPELINE_PARENT_FLOW_RUN_ID"
#: every stage's command runs its module through this script (the interpreter of the project's .venv, whatever PATH
#: says; deployments/run-stage)
RUN_STAGE = "deployments/run-stage"
PARENT_TASK = "PIPELINE_PARENT_TASK_RUN_ID"


def strip_run_facts(path: Path) -> None:
    """Rewrite the metrics file at ``path`` without wall-clock keys (``*seconds``, ``*runtime``, ...): DVC hashes it,
    so it must depend on the inputs and the code only. The flow has logged the timings to MLflow already."""
    import json

    from embodied_safety.io import without_run_facts, write_json

    data = json.loads(path.read_text())
    kept = without_run_facts(data)
    if kept != data:
        write_json(path, kept)


def exit_without_teardown(code: int = 0) -> None:
    """End this process the way the interpreter would, minus its teardown: wait for the non-daemon threads, run the
    ``atexit`` handlers (Prefect's log and event workers drain there, ``logging`` flushes), flush stdio, then
    ``os._exit``. The skipped part, freeing every module's objects (torch, transformers, MLflow, Prefect), took
    1.35 s of each stage process after its work was done (``flows.calibrate``: 10.10 s -> 8.75 s, 18 stages in
    ``make demo``). Every output is already written atomically and closed by then; nothing is lost."""
    import atexit
    import contextlib
    import sys
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # CPython: joins non-daemon threads, as at interpreter exit
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stream: nothing left to flush
            stream.flush()
    os._exit(code)


@dataclasses.dataclass(frozen=True)
class Out:
    """A DVC output with its flags (``persist``: kept across runs; ``cache: false``: tracked in git)."""

    path: str
    persist: bool = False
    cache: bool = True


@dataclasses.dataclass(frozen=True)
class Plot:
    """A figure the stage draws: its PNG (an image plot in DVC) and, beside it, its data file ``<stem>.json``
    (:mod:`embodied_safety.evaluation.plots`), declared with the project's template: ``series`` (rows
    ``panel, series, x, y``: a line per series, a panel per ``panel``) or ``bars`` (rows ``panel, series,
    category, value``). ``data=False``: the PNG only (e.g. a heat map)."""

    path: str
    template: str = "series"
    x_label: str = "step"
    y_label: str = ""
    data: bool = True

    def dvc(self) -> list[Any]:
        entries: list[Any] = [self.path]
        if self.data:
            x, y = ("x", "y") if self.template == "series" else ("value", "category")
            labels = ((self.x_label, self.y_label) if self.template == "series" else (self.y_label or "value", ""))
            entries.append({str(Path(self.path).with_suffix(".json")): {
                "template": self.template, "x": x, "y": y, "title": str(Path(self.path).with_suffix("")),
                **{k: v for k, v in zip(("x_label", "y_label"), labels, strict=True) if v}}})
        return entries


@dataclasses.dataclass(frozen=True)
class Arg:
    """An extra command-line argument of a stage (``argparse.add_argument(*flags, **options)``); its ``dest``,
    when it names a flow parameter and the value is not None, is passed to the flow."""

    flags: tuple[str, ...]
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Stage:
    """One DVC stage.

    ``config``: the dataclass of the ``params.yaml`` section named like the stage, passed as the flow's first
    argument (None: the flow takes no config). ``params``: the ``params.yaml`` keys DVC tracks (default: the
    section). ``sections``: other sections the flow reads, ``{flow keyword: (section, dataclass)}``.
    ``inputs``: named input paths (DVC deps); one whose name is a flow parameter is passed to it. ``outs``,
    ``metrics``, ``plots``: what the stage writes. ``code``: the modules whose import closure is the stage's
    code (default: the stage's own module). ``load(section, cls, params_path)`` replaces ``load_params`` for
    the config; ``wrap(flow, cfg)`` may swap the flow (e.g. its task runner); ``call(stage, cfg, args,
    kwargs)`` replaces the default ``run_stage(flow, cfg, **kwargs)`` (e.g. a stage with two commands).
    ``foreach``/``cmd_args``: a DVC ``foreach`` stage (``${item}`` in ``cmd_args``, inputs and outputs); the items, or
    a params reference such as ``"${shield_ppo.envs}"`` (DVC resolves it from ``params.yaml``, so a budget can drop items).
    ``tables``: markdown files published on the flow run (besides the ``*.md`` directly in the outputs);
    ``headline``: the metric keys of the table artifact (default: every number of the metrics file, up to 60).
    """

    name: str
    flow: Callable[..., Any]
    module: str = ""
    config: type | None = None
    params: tuple[str, ...] | None = None
    sections: Mapping[str, tuple[str, type]] = dataclasses.field(default_factory=dict)
    inputs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    outs: tuple[str | Out, ...] = ()
    metrics: str | None = None
    plots: tuple[str | Plot, ...] = ()
    args: tuple[Arg, ...] = ()
    code: tuple[str, ...] = ()
    load: Callable[[str, type, str], Any] | None = None
    wrap: Callable[[Any, Any], Any] | None = None
    call: Callable[[Stage, Any, argparse.Namespace, dict[str, Any]], Any] | None = None
    foreach: tuple[str, ...] | str = ()
    cmd_args: str = ""
    doc: str | None = None
    tables: tuple[str, ...] = ()
    headline: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        import sys

        defined_in = getattr(getattr(self.flow, "fn", self.flow), "__module__", "")
        if not self.module:  # the module that declares the stage (its import name under ``python -m`` too)
            spec = getattr(sys.modules.get("__main__"), "__spec__", None)
            object.__setattr__(self, "module", spec.name if defined_in == "__main__" and spec else defined_in)
        if self.doc is None:
            object.__setattr__(self, "doc", getattr(sys.modules.get(defined_in), "__doc__", None))
        for plot in self.plots:  # a figure's data file beside its PNG must not overwrite the metrics file
            if plot.data and str(Path(plot.path).with_suffix(".json")) == self.metrics:
                raise ValueError(f"stage {self.name}: the data file of plot {plot.path} is the metrics file {self.metrics}")

    # ------------------------------------------------------------------ declaration -> DVC
    @property
    def cmd(self) -> str:
        """``deployments/run-stage <module>``: ``python -m <module>`` with the project's interpreter, not PATH's."""
        return " ".join([RUN_STAGE, self.module, *([self.cmd_args] if self.cmd_args else [])])

    @property
    def param_keys(self) -> tuple[str, ...]:
        if self.params is not None:
            return self.params
        return (self.name,) if self.config is not None else ()

    @property
    def code_modules(self) -> tuple[str, ...]:
        return self.code or (self.module,)

    def dvc(self) -> dict[str, Any]:
        """The stage's ``dvc.yaml`` entry."""
        from embodied_safety.codekey import closure_deps

        entry: dict[str, Any] = {"cmd": self.cmd,
                                 "deps": [*self.inputs.values(), *closure_deps(*self.code_modules)]}
        if self.param_keys:
            entry["params"] = list(self.param_keys)
        entry["outs"] = [o if isinstance(o, str) else
                         {o.path: {**({"persist": True} if o.persist else {}), **({} if o.cache else {"cache": False})}}
                         for o in self.outs]
        if self.metrics:  # kept in git (DVC's convention for small metrics): main shows the numbers its dvc.lock stands for
            entry["metrics"] = [{self.metrics: {"cache": False}}]
        if not self.foreach:
            return entry
        return {"foreach": self.foreach if isinstance(self.foreach, str) else list(self.foreach), "do": entry}

    # ------------------------------------------------------------------ the envelope
    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=f"python -m {self.module}", description=self.doc,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--params", default="params.yaml", help="the params file (default: params.yaml)")
        for a in self.args:
            parser.add_argument(*a.flags, **dict(a.options))
        return parser

    def load_config(self, params: str) -> Any:
        from embodied_safety.config.params import load_params

        if self.config is None:
            return None
        return (self.load or load_params)(self.name, self.config, params)

    def main(self, argv: list[str] | None = None) -> Any:
        """``python -m flows.<stage> [--params FILE] [declared args]``. With ``argv`` None (the command line: this
        process is the stage's own) a successful run ends the process without interpreter teardown
        (:func:`exit_without_teardown`)."""
        from embodied_safety.config.params import load_params
        from embodied_safety.threads import pin_stage_threads

        pin_stage_threads()  # the same float results on any core count (a direct `dvc repro` included)

        parser = self.parser()
        args = parser.parse_args(argv)
        cfg = self.load_config(args.params)
        names = set(inspect.signature(getattr(self.flow, "fn", self.flow)).parameters)
        kwargs: dict[str, Any] = {k: Path(v) for k, v in self.inputs.items() if k in names and "${" not in v}
        kwargs.update({kw: load_params(section, cls, args.params) for kw, (section, cls) in self.sections.items()})
        defaults = True
        for a in self.args:
            dest = parser._option_string_actions[a.flags[0]].dest
            value = getattr(args, dest)
            defaults &= value == parser.get_default(dest)
            if dest in names and value is not None:
                kwargs[dest] = value
        from embodied_safety.io import clear_scratch
        from tasks.progress import quiet_progress_bars, strip_carriage_returns

        quiet_progress_bars()
        strip_carriage_returns()
        outs = self.out_paths(args)
        for out in outs:  # a killed earlier run's scratch folders
            clear_scratch(out)
        try:
            if self.call is not None:
                result = self.call(self, cfg, args, kwargs)
            else:
                flow_obj = self.wrap(self.flow, cfg) if self.wrap is not None else self.flow
                flow_obj = self.publishing(flow_obj)
                result = run_stage(flow_obj, *([cfg] if self.config is not None else []), **kwargs)
        finally:  # a failed run's: beside an output they would change the hash of any folder that holds it
            for out in outs:
                clear_scratch(out)
        if defaults and self.metrics and not self.foreach and self.call is None:
            if not Path(self.metrics).is_file():
                raise SystemExit(f"stage {self.name}: the declared metrics file {self.metrics} was not written")
            strip_run_facts(Path(self.metrics))
        if argv is None:
            exit_without_teardown()
        return result

    def out_paths(self, args: argparse.Namespace | None = None) -> list[Path]:
        """The declared outputs, metrics file and plots of this run; ``${item}`` from the ``--env`` argument (outputs
        of other items are left out: another item may be running)."""
        item = getattr(args, "env", None) if args is not None else None
        paths = [o.path if isinstance(o, Out) else o for o in self.outs]
        paths += [p.path if isinstance(p, Plot) else p for p in self.plots] + ([self.metrics] if self.metrics else [])
        return [Path(p.replace("${item}", item) if item else p) for p in paths if item or "${item}" not in p]


    # ------------------------------------------------------------------ results in the Prefect UI
    def publishing(self, flow_obj: Any) -> Any:
        """``flow_obj`` with a completion hook that publishes the stage's results on its flow run."""
        if not hasattr(flow_obj, "with_options"):
            return flow_obj

        def publish(flow: Any, flow_run: Any, state: Any) -> None:
            self.publish(flow_run.id)

        return flow_obj.with_options(on_completion=[*getattr(flow_obj, "on_completion_hooks", []), publish])

    def result_tables(self) -> list[Path]:
        """Markdown tables the stage wrote: the declared ones and the ``*.md`` directly in its outputs."""
        found = [Path(t) for t in self.tables]
        for o in self.outs:
            p = Path(o if isinstance(o, str) else o.path)
            if "${" not in str(p) and p.is_dir():
                found += sorted(p.glob("*.md"))[:4]
        return [p for p in dict.fromkeys(found) if p.is_file()]

    def headline_rows(self) -> list[dict[str, Any]]:
        """``[{"metric", "value"}]`` from the metrics file (flattened; numbers and short strings)."""
        import json

        if not self.metrics or "${" in self.metrics or not Path(self.metrics).is_file():
            return []
        flat: dict[str, Any] = {}

        def walk(prefix: str, v: Any) -> None:
            if isinstance(v, dict):
                for k, x in v.items():
                    walk(f"{prefix}/{k}" if prefix else str(k), x)
            elif isinstance(v, bool | int | float) or (isinstance(v, str) and len(v) < 80):
                flat[prefix] = v

        walk("", json.loads(Path(self.metrics).read_text()))
        keys = [k for k in self.headline if k in flat] or [k for k, v in flat.items() if not isinstance(v, str)][:60]
        return [{"metric": k, "value": round(flat[k], 6) if isinstance(flat[k], float) else flat[k]} for k in keys]

    def publish(self, flow_run_id: Any) -> None:
        """The headline (metrics + tables) as a markdown artifact and the key numbers as a table artifact on
        the flow run ``flow_run_id``; never fails the stage."""
        import json
        import logging

        from tasks.progress import artifact_key

        try:
            from prefect.client.orchestration import get_client
            from prefect.client.schemas.actions import ArtifactCreate

            rows = self.headline_rows()
            parts = [f"# Stage `{self.name}`\n"]
            if rows:
                parts.append(f"Metrics (`{self.metrics}`):\n\n| metric | value |\n|---|---|\n"
                             + "\n".join(f"| {r['metric']} | {r['value']} |" for r in rows) + "\n")
            for t in self.result_tables():
                parts.append(f"## `{t}`\n\n{t.read_text()[:20000]}\n")
            if self.plots:
                parts.append("Figures: " + ", ".join(f"`{p if isinstance(p, str) else p.path}`" for p in self.plots))
            key = artifact_key(self.name)
            with get_client(sync_client=True) as client:
                client.create_artifact(ArtifactCreate(key=f"{key}-results", type="markdown", data="\n".join(parts),
                                                      description=f"{self.name}: headline", flow_run_id=flow_run_id))
                if rows:
                    client.create_artifact(ArtifactCreate(key=f"{key}-metrics", type="table", data=json.dumps(rows),
                                                          description=f"{self.name}: key numbers",
                                                          flow_run_id=flow_run_id))
        except Exception as e:  # noqa: BLE001 - the UI is a view; the stage's files are the result
            logging.getLogger(__name__).warning("stage %s: results not published to Prefect: %s", self.name, e)


def run_stage(flow_obj: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``flow_obj(*args, **kwargs)``, as a child flow run of the pipeline's ``dvc-repro`` task when
    ``flows.pipeline`` launched this process."""
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
    bound = inspect.signature(flow_obj.fn).bind_partial(*args, **kwargs)
    return dict(bound.arguments)
