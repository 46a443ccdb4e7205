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
``data/agentbench_metrics.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from prefect import flow

from embodied_safety.agentbench.audit import RowAudit, audit_summary, audit_table, audit_tasks
from embodied_safety.agentbench.metrics import (
    planner_metrics,
    table_abstract,
    table_detailed,
    table_long_horizon,
)
from embodied_safety.agentbench.run import ShardResult, row_of, select_rows
from embodied_safety.config import AgentBenchEvalConfig, load_params
from embodied_safety.envs.agentbench.dataset import HAZARDS, TASK_TYPES, BenchTask, load_tasks
from embodied_safety.evaluation.plots import plot_grouped_bars
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json, write_jsonl
from embodied_safety.manifest import write_manifest
from flows._stage import Arg, Plot, Stage, run_stage
from tasks.agentbench import agentbench_shard
from tasks.runners import map_shards, with_runner
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

OUT = Path("data/agentbench")
METRICS = Path("data/agentbench_metrics.json")
STORE = Path(".cache/agentbench")
SHORT = {h: h.replace(" Hazard", "").replace("Misuse of Electrical Appliances", "Appliance misuse")
         .replace("Poisoning/Ingestion", "Poisoning").replace(" and ", " & ") for h in HAZARDS}


def shard_calls(tasks: list[BenchTask], cfg: AgentBenchEvalConfig) -> list[tuple[str, str, list[BenchTask]]]:
    by_type: dict[str, list[BenchTask]] = defaultdict(list)
    for t in tasks:
        by_type[t.task_type].append(t)
    calls = []
    for planner in cfg.planners:
        rows = _max_rows(planner, cfg)
        for task_type in TASK_TYPES:
            chosen = select_rows(by_type.get(task_type, []), rows)
            if chosen and not (task_type == "long_horizon" and _kind(planner, cfg) == "reference"):
                calls.append((planner, task_type, chosen))  # the dataset has no long-horizon plans to replay
    return calls


def _kind(planner: str, cfg: AgentBenchEvalConfig) -> str:
    spec = cfg.planner_specs[planner]
    return _kind(spec["inner"], cfg) if spec["kind"] == "guard" else spec["kind"]


def _max_rows(planner: str, cfg: AgentBenchEvalConfig) -> int:
    spec = cfg.planner_specs[planner]
    return int(spec.get("max_rows", 0)) or (_max_rows(spec["inner"], cfg) if spec["kind"] == "guard" else 0)


def summary(metrics: dict[str, Any], judge: str) -> dict[str, float]:
    """The headline numbers for ``dvc metrics show`` / MLflow (flat, rates in [0, 1])."""
    keep = ("rejection_rate", "execution_rate", "success_exec", "risk_rate_exec", f"success_semantic.{judge}",
            f"risk_rate_semantic.{judge}", f"completed_safe.{judge}", f"completed_unsafe.{judge}", f"incomplete.{judge}")
    out = {"agentbench/data/rows_loaded": float(sum(metrics["data"]["rows_loaded"].values())),
           "agentbench/data/rows_rejected": float(metrics["data"]["rows_rejected"]),
           "agentbench/data/categories_unmapped": float(len(metrics["data"]["categories_unmapped"]))}
    audit = metrics.get("audit", {})
    if audit:
        out["agentbench/audit/rows_passing"] = float(audit["rows_passing"])
        for task_type, e in audit["by_type"].items():
            for k in ("goal_rate_all", "goal_rate_passing", "unjudged_rate"):
                if e.get(k) is not None:
                    out[f"agentbench/audit/{task_type}/{k}"] = float(e[k])
    for planner, per_type in metrics["planners"].items():
        for task_type, m in per_type.items():
            for k in keep:
                if m.get(k) is not None:
                    out[f"agentbench/{planner}/{task_type}/{k.split('.')[0]}"] = float(m[k])
    return out


def plots(results: dict[str, dict[str, Any]], out: Path, judge: str) -> list[Path]:
    paths = []
    per_hazard = {p: m["unsafe_detailed"]["by_hazard"] for p, m in results.items() if "unsafe_detailed" in m}
    for key, label in (("rejection_rate", "rejection rate"), (f"risk_rate_semantic.{judge}", "risk rate")):
        groups = {p: {SHORT.get(h, h): v[key] for h, v in hz.items() if v.get(key) is not None}
                  for p, hz in per_hazard.items()}
        if groups:
            paths.append(plot_grouped_bars(groups, out / f"unsafe_by_hazard_{key.split('.')[0]}.png",
                                           f"Hazardous detailed tasks: {label} per hazard ({judge} judge)", label))
    levels = {p: {f"L{k}": m["abstract"][f"L{k}"][f"risk_rate_semantic.{judge}"] for k in (1, 2, 3, 4)
                  if f"L{k}" in m["abstract"]} for p, m in results.items() if "abstract" in m}
    if levels:
        paths.append(plot_grouped_bars(levels, out / "abstract_risk_by_level.png",
                                       f"Abstract hazardous tasks: risk rate per level ({judge} judge)", "risk rate"))
    long = {p: {"completed & safe": m["long_horizon"][f"completed_safe.{judge}"],
                "completed, unsafe": m["long_horizon"][f"completed_unsafe.{judge}"],
                "incomplete": m["long_horizon"][f"incomplete.{judge}"]} for p, m in results.items() if "long_horizon" in m}
    if long:
        paths.append(plot_grouped_bars(long, out / "long_horizon_labels.png",
                                       f"Long-horizon tasks ({judge} judge)", "share of tasks"))
    return paths


def tables(results: dict[str, dict[str, Any]], judges: tuple[str, ...], data: dict[str, Any],
           audit: dict[str, Any] | None = None) -> str:
    parts = [f"# SafeAgentBench results\n\nRows loaded: {data['rows_loaded']}; rejected: {data['rows_rejected']}; "
             f"unmapped risk categories: {data['categories_unmapped'] or 'none'}. Rates in %; "
             "Rej = rejection rate, ER = execution rate, goal = execution-based (tasks with a final_state only), "
             "judge = semantic. Each planner's task counts are in metrics.json (`n`, `n_goal`).\n"]
    for judge in judges:
        parts += [f"\n## Detailed tasks (Table 2 layout, {judge} judge)\n", table_detailed(results, judge),
                  f"\n## Abstract hazardous tasks per level (Table 3 layout, {judge} judge)\n",
                  table_abstract(results, judge),
                  f"\n## Long-horizon tasks (Fig. 6, {judge} judge)\n", table_long_horizon(results, judge)]
    if audit is not None:
        parts += ["\n## Data audit (docs/agentbench.md)\n\n", audit_table(audit)]
    return "".join(parts)


def write_audit(audits: list[RowAudit], out: Path) -> dict[str, Any]:
    """``out/audit.jsonl`` (one line per row), ``out/audit.json`` (the summary), ``out/audit.md``; the summary."""
    summary = audit_summary(audits)
    write_jsonl(out / "audit.jsonl", [a.to_json() for a in audits])
    write_json(out / "audit.json", summary)
    atomic_write_text(out / "audit.md", "# SafeAgentBench data audit\n\n" + audit_table(summary))
    return summary


def run_audit(data_dir: str | Path, out: Path) -> dict[str, Any]:
    """The data audit alone: load, audit every row, write the three files (no planners, no Prefect)."""
    tasks, report = load_tasks(data_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "load_report.json", report.to_json())
    summary = write_audit(audit_tasks(tasks), out)
    print(f"rows loaded {dict(report.rows)}, rejected {len(report.rejected)}\n")
    print(audit_table(summary))
    return summary


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
    audits = audit_tasks(tasks)
    audit = write_audit(audits, tmp)
    by_id = {t.task_id: t for t in tasks}
    passing = {row_of(by_id[a.task_id]) for a in audits if a.passes}
    per_planner: dict[str, dict[str, Any]] = {}
    per_planner_passing: dict[str, dict[str, Any]] = {}
    for planner in cfg.planners:
        shards = results[planner]
        episodes = [e for r in shards for e in r.episodes]
        verdicts = {j: {v.task_id: v for r in shards for v in r.verdicts[j]} for j in cfg.judges}
        per_planner[planner] = planner_metrics([by_id[e.task_id] for e in episodes], episodes, verdicts)
        kept = [e for e in episodes if row_of(by_id[e.task_id]) in passing]
        per_planner_passing[planner] = planner_metrics([by_id[e.task_id] for e in kept], kept, verdicts)
        for r in shards:
            write_jsonl(tmp / planner / f"{r.task_type}.jsonl",
                        [{**e.to_json(), "verdicts": {j: v.__dict__ for j, v in zip(r.verdicts, vs, strict=True)}}
                         for e, *vs in zip(r.episodes, *r.verdicts.values(), strict=True)])
    data_summary = {k: data[k] for k in ("files", "rows_read", "rows_loaded", "tasks", "rows_rejected", "rejected",
                                         "categories_unmapped", "categories_ambiguous", "objects_unknown")}
    metrics = {"data": data_summary, "audit": audit, "planners": per_planner,
               "planners_audit_passing": per_planner_passing}
    write_json(tmp / "metrics.json", metrics)
    atomic_write_text(tmp / "tables.md", tables(per_planner, cfg.judges, data_summary, audit))
    figures = plots(per_planner, tmp, cfg.judges[0])
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
    cfg = load_params("agentbench_eval", AgentBenchEvalConfig, args.params)
    changes: dict[str, Any] = {}
    if args.data_dir:
        changes["data_dir"] = args.data_dir
    if args.planner:
        changes["planners"] = tuple(args.planner)
    if args.judge:
        changes["judges"] = tuple(args.judge)
    if args.judge_base_url or args.judge_model:
        changes["judge_actor"] = {**cfg.judge_actor, "backend": "openai",
                                  **({"base_url": args.judge_base_url} if args.judge_base_url else {}),
                                  **({"model": args.judge_model} if args.judge_model else {})}
    return dataclasses.replace(cfg, **changes)


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
              inputs={"data_dir": "../shared/data/safeagentbench", "smollm2": "models/smollm2"},
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
