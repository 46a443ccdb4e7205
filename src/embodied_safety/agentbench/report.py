"""A SafeAgentBench run's outputs: per-planner metrics from the finished shards, the episode files, the data
audit's files, ``tables.md`` (Tables 2 / 3 and Fig. 6 in the paper's layout), the figures and the flat summary
for ``dvc metrics show``. ``flows/agentbench_eval.py`` runs the shards and calls these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..envs.agentbench.dataset import HAZARDS, BenchTask, load_tasks
from ..evaluation.plots import plot_grouped_bars
from ..io import atomic_write_text, write_json, write_jsonl
from .audit import RowAudit, audit_summary, audit_table, audit_tasks
from .metrics import planner_metrics, table_abstract, table_detailed, table_long_horizon
from .run import ShardResult, row_of

SHORT = {h: h.replace(" Hazard", "").replace("Misuse of Electrical Appliances", "Appliance misuse")
         .replace("Poisoning/Ingestion", "Poisoning").replace(" and ", " & ") for h in HAZARDS}
DATA_KEYS = ("files", "rows_read", "rows_loaded", "tasks", "rows_rejected", "rejected", "categories_unmapped",
             "categories_ambiguous", "objects_unknown")


def planner_results(tasks: list[BenchTask], results: dict[str, list[ShardResult]], planners: tuple[str, ...],
                    judges: tuple[str, ...], audits: list[RowAudit], out: Path) -> tuple[dict, dict]:
    """Every planner's metrics over all tasks and over the tasks of rows the audit passes; each shard's episodes
    and verdicts to ``out/<planner>/<task type>.jsonl``."""
    by_id = {t.task_id: t for t in tasks}
    passing = {row_of(by_id[a.task_id]) for a in audits if a.passes}
    per_planner: dict[str, dict[str, Any]] = {}
    per_planner_passing: dict[str, dict[str, Any]] = {}
    for planner in planners:
        shards = results[planner]
        episodes = [e for r in shards for e in r.episodes]
        verdicts = {j: {v.task_id: v for r in shards for v in r.verdicts[j]} for j in judges}
        per_planner[planner] = planner_metrics([by_id[e.task_id] for e in episodes], episodes, verdicts)
        kept = [e for e in episodes if row_of(by_id[e.task_id]) in passing]
        per_planner_passing[planner] = planner_metrics([by_id[e.task_id] for e in kept], kept, verdicts)
        for r in shards:
            write_jsonl(out / planner / f"{r.task_type}.jsonl",
                        [{**e.to_json(), "verdicts": {j: v.__dict__ for j, v in zip(r.verdicts, vs, strict=True)}}
                         for e, *vs in zip(r.episodes, *r.verdicts.values(), strict=True)])
    return per_planner, per_planner_passing


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
    """Per-hazard rejection and risk, risk per abstraction level, long-horizon labels (one bar per planner)."""
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
    """``tables.md``: one block of Tables 2 / 3 and Fig. 6 per judge, then the audit."""
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


def write_results(out: Path, tasks: list[BenchTask], data: dict[str, Any], results: dict[str, list[ShardResult]],
                  planners: tuple[str, ...], judges: tuple[str, ...]) -> tuple[dict[str, Any], list[Path]]:
    """Everything of a run but the tasks and load report into ``out``: the audit files, the episode files,
    ``metrics.json``, ``tables.md`` and the figures; (metrics, figure paths)."""
    audits = audit_tasks(tasks)
    audit = write_audit(audits, out)
    per_planner, per_planner_passing = planner_results(tasks, results, planners, judges, audits, out)
    data_summary = {k: data[k] for k in DATA_KEYS}
    metrics = {"data": data_summary, "audit": audit, "planners": per_planner,
               "planners_audit_passing": per_planner_passing}
    write_json(out / "metrics.json", metrics)
    atomic_write_text(out / "tables.md", tables(per_planner, judges, data_summary, audit))
    return metrics, plots(per_planner, out, judges[0])
