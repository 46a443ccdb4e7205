"""Stage ``agentbench_eval``: planners on SafeAgentBench — rejection, risk and success per task type.

Loads the four upstream files from ``data_dir`` (full or partial; :mod:`embodied_safety.envs.agentbench.dataset`),
then runs every (planner, task type) shard (``tasks/agentbench.py``: plan, execute in the symbolic world,
judge), and writes::

    OUT/tasks.jsonl           the normalised tasks
    OUT/load_report.json      rows per file, rejected rows with reasons, risk-category mapping, step errors
    OUT/<planner>/<type>.jsonl  episodes and verdicts
    OUT/metrics.json          rows loaded / rejected and every metric per planner and task type
    OUT/tables.md             Tables 2 / 3 and Fig. 6 in the paper's layout, one block per judge, and the audit
    OUT/*.png                 per-hazard rejection and risk, risk per abstraction level, long-horizon labels
    OUT/audit.jsonl           the data audit, one line per row (:mod:`embodied_safety.agentbench.audit`)

metrics.json reports every planner's metrics over all tasks (``planners``) and over the tasks of rows the audit
passes (``planners_audit_passing``).

The data audit alone (no planners; ``OUT/audit.jsonl``, ``OUT/audit.json``, ``OUT/audit.md``)::

    python -m flows.agentbench_eval --audit --data-dir DIR --out OUT

Ad hoc, on any folder and planner::

    python -m flows.agentbench_eval --data-dir DIR --planner reference --out OUT
    python -m flows.agentbench_eval --data-dir DIR --planner guard --judge llm \\
        --judge-base-url http://127.0.0.1:8000/v1 --judge-model NAME --out OUT

Without ``--out`` it is the DVC stage: params ``agentbench_eval``, ``OUT = data/agentbench`` and the summary
``data/agentbench_metrics.json``. The shards: :func:`embodied_safety.agentbench.run.shard_calls`; metrics,
tables, figures and the audit files: :mod:`embodied_safety.agentbench.report`.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from prefect import flow

from embodied_safety.agentbench.report import run_audit, summary, write_results
from embodied_safety.agentbench.run import ShardResult, shard_calls
from embodied_safety.config.agentbench_eval import AgentBenchEvalConfig
from embodied_safety.config.params import load_params
from embodied_safety.envs.agentbench.dataset import load_tasks
from embodied_safety.io import replace_dir, scratch_dir, write_json, write_jsonl
from embodied_safety.manifest import write_manifest
from flows._stage import Arg, Plot, Stage, run_stage
from tasks.agentbench import agentbench_shard
from tasks.runners import map_shards, with_runner
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

OUT = Path("data/agentbench")
METRICS = Path("data/agentbench_metrics.json")
STORE = Path(".cache/agentbench")


@flow(name="agentbench_eval", log_prints=True)
def agentbench_eval(cfg: AgentBenchEvalConfig = AgentBenchEvalConfig(), out: Path = OUT,
                    metrics_path: Path | None = METRICS, store: Path = STORE, track: bool = True) -> dict[str, Any]:
    tasks, report = load_tasks(cfg.data_dir)
    data = report.to_json()
    print(f"loaded {dict(report.tasks)} tasks from {report.files}; rejected {len(report.rejected)} rows; "
          f"unmapped categories {report.unmapped or 'none'}")
    tmp = scratch_dir(out)
    write_jsonl(tmp / "tasks.jsonl", [t.to_json() for t in tasks])
    write_json(tmp / "load_report.json", data)
    calls = [(planner, task_type, chosen, cfg, store) for planner, task_type, chosen in shard_calls(tasks, cfg)]
    results: dict[str, list[ShardResult]] = defaultdict(list)
    started = time.perf_counter()

    def progress(args: tuple, value: tuple[ShardResult, bool]) -> None:
        result, reused = value
        results[result.planner].append(result)
        print(f"[{sum(map(len, results.values()))}/{len(calls)}] {result.planner:16s} {result.task_type:16s} "
              f"{len(result.episodes):4d} tasks {'(stored)' if reused else ''} {time.perf_counter() - started:.0f} s")

    map_shards(agentbench_shard, calls, cfg, done=progress)
    metrics, figures = write_results(tmp, tasks, data, results, cfg.planners, cfg.judges)
    write_manifest(tmp, cfg, inputs=[Path(p) for p in report.files.values()])
    replace_dir(tmp, out)
    flat = summary(metrics, cfg.judges[0])
    if metrics_path is not None:
        write_json(metrics_path, flat)
    if track:
        with mlflow_run(tracking_config(cfg.tracking), "agentbench_eval", dataclasses.asdict(cfg)):
            log_metrics(flat)
            log_artifacts([out / "metrics.json", out / "tables.md", out / "load_report.json",
                           *(out / p.name for p in figures)])
    print((out / "tables.md").read_text())
    return metrics


def config_from_args(args: argparse.Namespace) -> AgentBenchEvalConfig:
    return load_params("agentbench_eval", AgentBenchEvalConfig, args.params).overridden(
        args.data_dir, args.planner, args.judge, args.judge_base_url, args.judge_model)


def _run(stage: Stage, cfg: AgentBenchEvalConfig, args: argparse.Namespace, kwargs: dict[str, Any]) -> Any:
    """The stage (no ``--out``), an ad hoc run (``--out``), or the data audit alone (``--audit``)."""
    if args.audit:
        if not args.out:
            stage.parser().error("--audit needs --out")
        return run_audit(args.data_dir or config_from_args(args).data_dir, args.out)
    cfg = config_from_args(args)
    if args.out:
        return run_stage(stage.publishing(with_runner(agentbench_eval, cfg)), cfg, out=args.out, metrics_path=None, store=args.store,
                         track=args.track)
    return run_stage(stage.publishing(with_runner(agentbench_eval, cfg)), cfg, store=args.store)


STAGE = Stage("agentbench_eval", agentbench_eval, config=AgentBenchEvalConfig, call=_run,
              inputs={"data_dir": "data/safeagentbench", "smollm2": "models/smollm2"},
              outs=(str(OUT),), metrics=str(METRICS),
              plots=tuple(Plot(f"{OUT}/{n}.png", "bars", y_label="rate") for n in ("unsafe_by_hazard_rejection_rate", "unsafe_by_hazard_risk_rate_semantic",
                                                      "abstract_risk_by_level", "long_horizon_labels")),
              args=(Arg(("--data-dir",), {"help": "folder with the four upstream files (default: params data_dir)"}),
                    Arg(("--planner",), {"action": "append", "help": "a planner of agentbench_eval.planner_specs (repeatable)"}),
                    Arg(("--judge",), {"action": "append", "choices": ["rule", "llm"], "help": "judge backend (repeatable)"}),
                    Arg(("--judge-base-url",), {"help": "OpenAI-compatible endpoint of the LLM judge"}),
                    Arg(("--judge-model",), {"help": "model name the LLM judge endpoint serves"}),
                    Arg(("--out",), {"type": Path, "help": "output folder (default: the DVC stage's data/agentbench)"}),
                    Arg(("--store",), {"type": Path, "default": STORE, "help": "where finished shards are kept for re-runs"}),
                    Arg(("--track",), {"action": "store_true", "help": "with --out: also log the run to MLflow"}),
                    Arg(("--audit",), {"action": "store_true",
                                       "help": "only audit the data (needs --out): audit.jsonl, .json, .md"})))
main = STAGE.main

if __name__ == "__main__":
    main()
