"""Paper-style tables from the stages' metrics and results files (pure functions; the report stage's
renderer, :mod:`embodied_safety.evaluation.render`, does the I/O). Each table has exactly one function here.

Every table is Markdown; in the method tables the best value of each column is bold (ties all bold). Missing
cells are ``-`` (a method not run on a split, or a result the default params do not produce). The SafeBranch
study tables (``seed_table``, ``fb_table``, ``risk_table``, ``sweep_table``) read ``models/safebranch/results.json``
(:mod:`embodied_safety.train.study`); ``labels`` maps a variant to its name in the paper.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

HEAD = ("sr", "ssr", "srec")
SPLIT_LABELS = {"test": "ID (test)", "ood_objectshift": "OOD-ObjectShift", "ood_taskshift": "OOD-TaskShift"}


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def markdown_table(header: Sequence[str], rows: Sequence[tuple[str, Sequence[float | None], Sequence[str]]],
                   best: str = "max") -> str:
    """``rows``: (label, numeric cells, trailing text cells); the best numeric cell per column is bold."""
    ncols = max((len(r[1]) for r in rows), default=0)
    bests = []
    for j in range(ncols):
        vals = [r[1][j] for r in rows if j < len(r[1]) and r[1][j] is not None]
        bests.append((max(vals) if best == "max" else min(vals)) if vals else None)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, cells, extra in rows:
        out = [f"**{_fmt(v)}**" if v is not None and bests[j] is not None and abs(v - bests[j]) < 5e-4 else _fmt(v)
               for j, v in enumerate(cells)]
        lines.append("| " + " | ".join([label, *out, *extra]) + " |")
    return "\n".join(lines) + "\n"


def table2(methods: Mapping[str, Mapping[str, float]], splits: Sequence[str],
           cost: Mapping[str, str] | None = None) -> str:
    """Methods x splits (SR, SSR, SRec); ``methods[label]["<split>/<k>"]``; optional test-time cost column."""
    header = ["method", *[f"{SPLIT_LABELS.get(s, s)} {k.upper()}" for s in splits for k in HEAD]]
    if cost is not None:
        header.append("test-time module calls")
    rows = [(label, [m.get(f"{s}/{k}") for s in splits for k in HEAD], [cost.get(label, "0")] if cost is not None else [])
            for label, m in methods.items()]
    return markdown_table(header, rows)


def funnel_table(funnel: Mapping[str, float]) -> str:
    """Table 12: pairs per stage, overall and per risk type / trigger."""
    stages = ("extracted", "judged", "final")
    keys = sorted({k.split("/", 2)[2] for k in funnel if k.startswith("data/pairs_extracted/")})
    rows = [("all", [funnel.get(f"data/pairs_{s}") for s in stages], [])]
    rows += [(k, [funnel.get(f"data/pairs_{s}/{k}") for s in stages], []) for k in keys]
    lines = ["| group | " + " | ".join(stages) + " | kept |", "|---|---|---|---|---|"]
    for label, cells, _ in rows:
        kept = f"{cells[2] / cells[0]:.2f}" if cells[0] and cells[2] is not None else "-"
        lines.append(f"| {label} | " + " | ".join("-" if c is None else f"{c:.0f}" for c in cells) + f" | {kept} |")
    return "\n".join(lines) + "\n"


def dynamics_table(curves: Mapping[str, Sequence[Mapping[str, float]]], sr_floor: float | None = None) -> str:
    """Table 15: dev SR / SSR / SRec at every evaluated step of each variant's last phase; the
    selected checkpoint (``evaluation.selection``: max SSR with SR >= ``sr_floor``, step > 0) marked."""
    from .selection import select

    lines = ["| variant | step | dev SR | dev SSR | dev SRec | selected |", "|---|---|---|---|---|---|"]
    for variant, curve in curves.items():
        chosen, _ = select([p for p in curve if p["step"] > 0], sr_floor)
        for p in curve:
            mark = "**yes**" if p is chosen else ""
            lines.append(f"| {variant} | {p['step']:.0f} | {p['sr']:.3f} | {p['ssr']:.3f} | {p.get('srec', 0):.3f} | {mark} |")
    return "\n".join(lines) + "\n"


def _ci(cell: Sequence[float] | None) -> str:
    if not cell:
        return "-"
    mean, lo, hi = cell[:3]
    mark = " *" if lo > 0 or hi < 0 else ""
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]{mark}"


def paired_table(paired: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]], splits: Sequence[str]) -> str:
    """Per-task paired differences with 95 % bootstrap intervals: ``paired[comparison][split][metric]``
    = [mean diff, lo, hi, tasks]; ``*`` marks an interval that excludes zero."""
    header = ["comparison", *[f"{SPLIT_LABELS.get(s, s)} Δ{k.upper()}" for s in splits for k in ("ssr", "sr")], "tasks"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, per_split in paired.items():
        cells = [_ci(per_split.get(s, {}).get(k)) for s in splits for k in ("ssr", "sr")]
        tasks = "/".join(f"{per_split[s]['ssr'][3]:.0f}" for s in splits if "ssr" in per_split.get(s, {}))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {tasks or '-'} |")
    return "\n".join(lines) + "\n"


def _mean_sd(vals: Sequence[float]) -> str:
    """Mean ± sample std over seeds; the mean alone for one seed (no spread to report)."""
    return f"{statistics.mean(vals):.3f} ± {statistics.stdev(vals):.3f}" if len(vals) > 1 else f"{vals[0]:.3f}"


def study_rows(results: Mapping[str, Any]) -> dict[str, list[Mapping[str, float]]]:
    """``{"base": [its eval], variant: [eval per seed]}`` from a SafeBranch ``results.json``, in run order."""
    rows: dict[str, list[Mapping[str, float]]] = {"base": [results["base"]]} if "base" in results else {}
    for r in results.get("runs", []):
        rows.setdefault(r["variant"], []).append(r["eval"])
    return rows


def seed_table(rows: Mapping[str, Sequence[Mapping[str, float]]], splits: Sequence[str],
               labels: Mapping[str, str] | None = None) -> str:
    """Table 2 over seeds: method x split (SR, SSR, SRec), mean ± std."""
    labels = labels or {}
    header = "| method | " + " | ".join(f"{s} {k.upper()}" for s in splits for k in HEAD) + " |"
    lines = [header, "|" + "---|" * (1 + len(splits) * len(HEAD))]
    for method, runs in rows.items():
        cells = [_mean_sd([r[f"{s}/{k}"] for r in runs]) for s in splits for k in HEAD]
        lines.append(f"| {labels.get(method, method)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def fb_table(rows: Mapping[str, Sequence[Mapping[str, float]]], split: str, labels: Mapping[str, str]) -> str:
    """Table 13: each scheme with the relabelled prompt (ours) and with the critic cue kept (+FB)."""
    lines = ["| scheme | prompt | SR | SSR | SRec |", "|---|---|---|---|---|"]
    for v in ("sft_only", "branchpo_only", "safebranch"):
        for variant, label in ((v, "relabelled (ours)"), (f"{v}_fb", "+FB")):
            if variant in rows:
                lines.append(f"| {labels.get(v, v)} | {label} | " + " | ".join(
                    _mean_sd([r[f"{split}/{k}"] for r in rows[variant]]) for k in HEAD) + " |")
    return "\n".join(lines) + "\n"


def risk_table(risks: Mapping[str, Sequence[Mapping[str, Mapping[str, Sequence[int]]]]], splits: Sequence[str]) -> str:
    """Table 16: per-risk-type SRec (safe / total triggered conditions) per method, summed over its runs."""
    names = sorted({r for runs in risks.values() for run in runs for s in splits for r in run.get(s, {})})
    lines = ["| risk type | " + " | ".join(f"{m} {s}" for s in splits for m in risks) + " |",
             "|---|" + "---|" * (len(splits) * len(risks))]
    for risk in names:
        cells = []
        for s in splits:
            for runs in risks.values():
                safe = sum(run.get(s, {}).get(risk, [0, 0])[0] for run in runs)
                total = sum(run.get(s, {}).get(risk, [0, 0])[1] for run in runs)
                cells.append(f"{safe}/{total} ({safe / total:.2f})" if total else "-")
        lines.append(f"| {risk} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sweep_table(runs: Sequence[Mapping[str, Any]], picks: Mapping[str, float], splits: Sequence[str]) -> str:
    """The learning-rate sweep: each point's selected step, dev point, last DPO reward accuracy and eval; the pick marked."""
    lines = ["| sweep (variant) | lr | selected step | dev SR | dev SSR | final reward acc. | "
             + " | ".join(f"{s} SR | {s} SSR" for s in splits) + " |", "|" + "---|" * (6 + 2 * len(splits))]
    for r in runs:
        last = r["phases"][-1]
        kind, lr, dev, acc = last["kind"], r["learning_rates"][last["kind"]], r["dev"], r.get("final_reward_acc")
        mark = " **(picked)**" if picks[r["sweep_key"]] == lr else ""
        step = last["metrics"].get(("sft" if kind == "sft" else "dpo") + "_dev/best_step", 0)
        lines.append(f"| {r['sweep_key']} ({r['variant']}) | {lr:g}{mark} | {step:.0f} | {dev.get('sr', 0):.3f} | "
                     f"{dev.get('ssr', 0):.3f} | {f'{acc:.2f}' if acc is not None else '-'} | "
                     + " | ".join(f"{r['eval'][f'{s}/sr']:.3f} | {r['eval'][f'{s}/ssr']:.3f}" for s in splits) + " |")
    return "\n".join(lines) + "\n"
