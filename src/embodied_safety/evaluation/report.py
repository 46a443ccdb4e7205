"""Paper-style tables from the stages' metrics (pure functions; ``flows/report.py`` does the I/O).

Every table is Markdown; the best value of each column is bold (ties all bold). Missing cells are
``-`` (a method not run on a split, or a result the default params do not produce).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
