"""One safety scorecard for any model across the benchmarks: per-task outcomes in, metrics with intervals out.

A scorecard is built from :class:`Outcome` rows, one per task a model was run on, whatever the benchmark:

* IS-Bench-layout folders (``isbench/<split>``): ``sr``, ``ssr`` per task, and the safety conditions it triggered
  and satisfied (``srec`` is their ratio over the tasks); a task that does not load is an outcome with
  ``sr = ssr = 0`` and ``load_failure = 1`` (counted, never dropped), as IS-Bench's ``*_all`` rates count it.
* SafeAgentBench files (``safeagentbench/<task type>``): ``rejected`` and, per judge, ``success`` (safe rows),
  ``risk`` (hazardous rows: completed a hazardous task) or the long-horizon labels; ``unparseable`` marks a model
  answer that yielded no plan and no refusal (a failed call, counted, never dropped).

Every rate gets a 95 % percentile bootstrap interval over tasks (:func:`interval`; a ratio metric such as ``srec``
resamples the tasks and takes the ratio of the sums). :func:`compare` pairs two scorecards task by task (paired
bootstrap of the per-task difference, :func:`embodied_safety.evaluation.stats.paired_bootstrap`) and lists the
tasks whose outcome changed. :func:`cohen_kappa` measures how two judges agree on the same episodes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .stats import paired_bootstrap

#: metric -> (numerator, denominator) for the rates that are a ratio of per-task sums
RATIOS: dict[str, tuple[str, str]] = {"srec": ("satisfied", "triggered")}
#: per-task counts, not rates: summarised as a mean per task, never compared as a rate
COUNTS = frozenset({"unparseable_outputs", "triggered", "satisfied"})
#: the headline metric of each benchmark family, in the order the Markdown shows them
HEADLINE: dict[str, tuple[str, ...]] = {
    "isbench": ("sr", "ssr", "srec", "load_failure"),
    "safeagentbench": ("rejected", "success", "risk", "completed_safe", "completed_unsafe", "incomplete",
                       "unparseable"),
}


@dataclass(frozen=True)
class Outcome:
    """One task's outcome on one benchmark: ``values`` are per-task numbers (0/1 flags or counts); ``groups`` the
    slices it belongs to (``risk:Fire Hazard``, ``level:L2``); ``judge`` the judge that produced judged values."""

    benchmark: str
    task: str
    values: Mapping[str, float]
    groups: tuple[str, ...] = ()
    judge: str = ""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "values": dict(self.values), "groups": list(self.groups)}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Outcome:
        return cls(str(raw["benchmark"]), str(raw["task"]), {k: float(v) for k, v in raw["values"].items()},
                   tuple(raw.get("groups", ())), str(raw.get("judge", "")))


def family(benchmark: str) -> str:
    return benchmark.split("/", 1)[0]


def interval(rows: Sequence[Mapping[str, float]], metric: str, n: int = 2000, seed: int = 0,
             level: float = 0.95) -> list[float] | None:
    """[value, lower, upper, tasks] of ``metric`` over ``rows`` (one per task), the bounds a percentile bootstrap
    over tasks; None when no row has it. A ratio metric (:data:`RATIOS`) is sum(num) / sum(den)."""
    import numpy as np

    if metric in RATIOS:
        num_key, den_key = RATIOS[metric]
        keep = [r for r in rows if den_key in r]
        if not keep or not sum(r[den_key] for r in keep):
            return None
        num = np.array([r[num_key] for r in keep], dtype=float)
        den = np.array([r[den_key] for r in keep], dtype=float)
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(keep), size=(n, len(keep)))
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = num[idx].sum(1) / den[idx].sum(1)
        boot = boot[np.isfinite(boot)]
        value = float(num.sum() / den.sum())
    else:
        x = np.array([r[metric] for r in rows if metric in r], dtype=float)
        if not len(x):
            return None
        rng = np.random.default_rng(seed)
        boot = x[rng.integers(0, len(x), size=(n, len(x)))].mean(1)
        value, keep = float(x.mean()), x
    tail = (1 - level) / 2 * 100
    return [value, float(np.percentile(boot, tail)), float(np.percentile(boot, 100 - tail)), float(len(keep))]


def _metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, list[float]]:
    names = sorted({k for r in rows for k in r} - {v for pair in RATIOS.values() for v in pair}
                   | {m for m, (_, den) in RATIOS.items() if any(den in r for r in rows)})
    return {m: iv for m in names if (iv := interval(rows, m)) is not None}


def summarize(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    """``{benchmark: {"tasks": n, "judge": ..., "metrics": {metric: [value, lo, hi, n]},
    "groups": {group: {metric: [...]}}}}`` over the outcomes, every interval a bootstrap over tasks."""
    by_bench: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_bench[o.benchmark].append(o)
    out: dict[str, Any] = {}
    for bench, rows in sorted(by_bench.items()):
        groups: dict[str, list[Mapping[str, float]]] = defaultdict(list)
        for o in rows:
            for g in o.groups:
                groups[g].append(o.values)
        out[bench] = {"tasks": len(rows), "judge": rows[0].judge,
                      "metrics": _metrics([o.values for o in rows]),
                      "groups": {g: _metrics(v) for g, v in sorted(groups.items())}}
    return out


def compare(ours: Iterable[Outcome], theirs: Iterable[Outcome], n: int = 10000,
            seed: int = 0) -> dict[str, Any]:
    """Paired comparison of two scorecards over the tasks both ran: per benchmark and metric
    ``[ours − theirs, lo, hi, tasks]`` (paired bootstrap over tasks), and per task the values that changed."""
    a = {(o.benchmark, o.task): o for o in ours}
    b = {(o.benchmark, o.task): o for o in theirs}
    shared = sorted(set(a) & set(b))
    metrics: dict[str, dict[str, list[float]]] = defaultdict(dict)
    benches = sorted({bench for bench, _ in shared})
    for bench in benches:
        keys = [k for k in shared if k[0] == bench]
        names = sorted({m for k in keys for m in a[k].values} & {m for k in keys for m in b[k].values})
        for m in names:
            pairs = [(a[k].values[m], b[k].values[m]) for k in keys if m in a[k].values and m in b[k].values]
            if pairs and m not in COUNTS:
                metrics[bench][m] = [*paired_bootstrap([p[0] for p in pairs], [p[1] for p in pairs], n, seed),
                                     float(len(pairs))]
    diffs = [{"benchmark": k[0], "task": k[1],
              "changed": {m: [b[k].values[m], a[k].values[m]] for m in sorted(a[k].values)
                          if m in b[k].values and a[k].values[m] != b[k].values[m]}}
             for k in shared]
    return {"tasks_shared": len(shared), "only_ours": len(set(a) - set(b)), "only_theirs": len(set(b) - set(a)),
            "metrics": dict(metrics), "per_task": [d for d in diffs if d["changed"]]}


def cohen_kappa(x: Sequence[str | None], y: Sequence[str | None]) -> dict[str, Any]:
    """Agreement of two labellings of the same items: Cohen's κ, the raw agreement and the confusion counts
    (``"a|b"`` -> n; an undecided label is its own class ``none``)."""
    if len(x) != len(y):
        raise ValueError(f"labellings differ in length: {len(x)} vs {len(y)}")
    xs, ys = [str(v).lower() if v is not None else "none" for v in x], [str(v).lower() if v is not None else "none"
                                                                        for v in y]
    n = len(xs)
    if not n:
        return {"kappa": None, "agreement": None, "n": 0, "confusion": {}}
    agree = sum(a == b for a, b in zip(xs, ys, strict=True)) / n
    px, py = Counter(xs), Counter(ys)
    chance = sum(px[c] * py[c] for c in set(px) | set(py)) / (n * n)
    kappa = 1.0 if chance == 1.0 else (agree - chance) / (1 - chance)
    return {"kappa": kappa, "agreement": agree, "n": n,
            "confusion": dict(sorted(Counter(f"{a}|{b}" for a, b in zip(xs, ys, strict=True)).items()))}


@dataclass
class Scorecard:
    """What ``scorecard.json`` holds: the model and how it was asked, the data and code it ran on, every task's
    outcome and the summary; with a comparison, the paired differences against another scorecard."""

    model: dict[str, Any]
    prompts: dict[str, str]
    code_key: str
    data: dict[str, str]  # benchmark -> content hash of its folder / files
    outcomes: list[Outcome]
    summary: dict[str, Any] = field(default_factory=dict)
    judges: dict[str, Any] = field(default_factory=dict)  # judge agreement per benchmark
    calls: dict[str, Any] = field(default_factory=dict)  # model calls, failed / unparseable, seconds
    comparison: dict[str, Any] | None = None
    against: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["outcomes"] = [o.to_json() for o in self.outcomes]
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Scorecard:
        fields = {k: raw[k] for k in ("model", "prompts", "code_key", "data") if k in raw}
        card = cls(**fields, outcomes=[Outcome.from_json(o) for o in raw.get("outcomes", [])])  # type: ignore[arg-type]
        for k in ("summary", "judges", "calls", "comparison", "against"):
            if k in raw:
                setattr(card, k, raw[k])
        return card


def _cell(iv: Sequence[float] | None) -> str:
    if iv is None:
        return "–"
    return f"{100 * iv[0]:.1f} [{100 * iv[1]:.1f}, {100 * iv[2]:.1f}]"


def _diff_cell(iv: Sequence[float] | None) -> str:
    if iv is None:
        return "–"
    return f"{100 * iv[0]:+.1f} [{100 * iv[1]:+.1f}, {100 * iv[2]:+.1f}]"


SECTIONS = ("tables", "slices", "judges", "calls", "comparison")


def render_markdown(card: Scorecard, sections: Sequence[str] = SECTIONS) -> str:
    """``scorecard.md``: the model, one table per benchmark family (rate in %, 95 % interval over tasks), the slices,
    judge agreement, the calls, and with a comparison the paired differences; ``headline.md`` is the tables and the
    comparison alone (``sections``)."""
    model = ", ".join(f"{k}: `{v}`" for k, v in card.model.items() if v)
    lines = [f"# Safety scorecard\n\nModel: {model}. Code key `{card.code_key}`; prompts "
             + ", ".join(f"`{k}` {v}" for k, v in card.prompts.items())
             + ". Rates in %, each with its 95 % percentile bootstrap interval over tasks; failed or unparseable "
               "calls count as failures and are listed, never dropped.\n"]
    for fam, heads in HEADLINE.items():
        benches = [b for b in card.summary if family(b) == fam]
        if not benches:
            continue
        cols = [m for m in heads if any(m in card.summary[b]["metrics"] for b in benches)]
        if "tables" not in sections:
            continue
        lines += [f"\n## {fam}\n", "| benchmark | tasks | judge | " + " | ".join(cols) + " |",
                  "|---|---|---|" + "---|" * len(cols)]
        for b in benches:
            s = card.summary[b]
            lines.append(f"| {b} | {s['tasks']} | {s['judge'] or '–'} | "
                         + " | ".join(_cell(s["metrics"].get(m)) for m in cols) + " |")
        slices = [(b, g, m) for b in benches for g, m in card.summary[b]["groups"].items()]
        if slices and "slices" in sections:
            key = cols[0] if fam == "safeagentbench" else "ssr"
            other = "risk" if fam == "safeagentbench" else "srec"
            lines += [f"\nPer slice ({key}, {other}):\n", f"| benchmark | slice | {key} | {other} |", "|---|---|---|---|"]
            lines += [f"| {b} | {g} | {_cell(m.get(key))} | {_cell(m.get(other))} |" for b, g, m in slices]
    if card.judges and "judges" in sections:
        lines += ["\n## Judges\n", "| benchmark | judges | κ | agreement | n | confusion |", "|---|---|---|---|---|---|"]
        for b, j in card.judges.items():
            kappa = "–" if j.get("kappa") is None else f"{j['kappa']:.3f}"
            agree = "–" if j.get("agreement") is None else f"{100 * j['agreement']:.1f} %"
            conf = ", ".join(f"{k}: {v}" for k, v in j.get("confusion", {}).items())
            lines.append(f"| {b} | {j.get('pair', '')} | {kappa} | {agree} | {j.get('n', 0)} | {conf} |")
    if card.calls and "calls" in sections:
        lines += ["\n## Calls\n", "| benchmark | " + " | ".join(sorted({k for v in card.calls.values() for k in v}))
                  + " |"]
        keys = sorted({k for v in card.calls.values() for k in v})
        lines.append("|---|" + "---|" * len(keys))
        lines += [f"| {b} | " + " | ".join(f"{v.get(k, '–')}" for k in keys) + " |" for b, v in card.calls.items()]
    if card.comparison and "comparison" in sections:
        c = card.comparison
        lines += [f"\n## Against `{card.against}`\n",
                  f"{c['tasks_shared']} tasks in both (only here: {c['only_ours']}, only there: {c['only_theirs']}). "
                  "Difference this − that, in points, with its paired bootstrap interval over tasks.\n",
                  "| benchmark | metric | difference | tasks |", "|---|---|---|---|"]
        for b, ms in c["metrics"].items():
            lines += [f"| {b} | {m} | {_diff_cell(iv)} | {int(iv[3])} |" for m, iv in ms.items()]
        lines.append(f"\n{len(c['per_task'])} tasks changed outcome (listed in scorecard.json, `comparison.per_task`).")
    return "\n".join(lines) + "\n"


#: the rates of the side-by-side table (``comparison.md``), per benchmark family
PAIR = {"isbench": ("sr", "ssr"), "safeagentbench": ("rejected",)}


def render_pair(ours: Scorecard, theirs: Scorecard) -> str:
    """``comparison.md``: the key rates of both scorecards side by side on every benchmark both ran, with the paired
    difference (``ours.comparison``), in %."""
    a, b = ours.model.get("name", "this"), theirs.model.get("name", "that")
    lines = [f"| benchmark | rate | {a} | {b} | difference (paired, tasks) |", "|---|---|---|---|---|"]
    for bench in sorted(set(ours.summary) & set(theirs.summary)):
        for m in PAIR.get(family(bench), ()):
            diff = (ours.comparison or {}).get("metrics", {}).get(bench, {}).get(m)
            if m in ours.summary[bench]["metrics"] and diff is not None:
                lines.append(f"| {bench} | {m} | {_cell(ours.summary[bench]['metrics'][m])} | "
                             f"{_cell(theirs.summary[bench]['metrics'].get(m))} | {_diff_cell(diff)} ({int(diff[3])}) |")
    lines.append(f"\n% with 95 % intervals, each column over its scorecard's tasks; {a} − {b} over the tasks both ran "
                 "(their number), paired bootstrap.")
    return "\n".join(lines) + "\n"


def plot(card: Scorecard, path: Any) -> None:
    """``scorecard.png``: one panel per benchmark family, the headline rates of each benchmark as grouped bars
    (a colour per metric) with their 95 % intervals over tasks."""
    import numpy as np
    from matplotlib.figure import Figure

    from .plots import save_figure

    fams = [f for f in HEADLINE if any(family(b) == f for b in card.summary)]
    fig = Figure(figsize=(11, 3.6 * max(len(fams), 1)), layout="constrained")
    axes = fig.subplots(max(len(fams), 1), 1, squeeze=False)[:, 0]
    for ax, fam in zip(axes, fams, strict=False):
        benches = [b for b in card.summary if family(b) == fam]
        metrics = [m for m in HEADLINE[fam] if any(m in card.summary[b]["metrics"] for b in benches)]
        width = 0.8 / max(len(metrics), 1)
        for j, m in enumerate(metrics):
            ivs = [card.summary[b]["metrics"].get(m) for b in benches]
            x = np.arange(len(benches)) + (j - (len(metrics) - 1) / 2) * width
            vals = np.array([100 * iv[0] if iv else np.nan for iv in ivs])
            err = np.array([[100 * (iv[0] - iv[1]) if iv else 0 for iv in ivs],
                            [100 * (iv[2] - iv[0]) if iv else 0 for iv in ivs]])
            ax.bar(x, vals, width, yerr=err, capsize=2, label=m, color=f"C{j}")
        ax.set_xticks(np.arange(len(benches)), [b.split("/", 1)[1] for b in benches], fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_ylabel("% of tasks")
        ax.set_title(f"{fam} (95 % interval over tasks)", fontsize=9)
        ax.legend(fontsize=7, ncols=min(len(metrics), 7), loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    fig.suptitle(f"Safety scorecard: {card.model.get('name') or card.model.get('model') or 'model'}", fontsize=10)
    save_figure(fig, path)
