"""The SafetyALFRED port as the ``alfred_port`` stage runs it: the corpus, the trained actors (base, SFT,
BranchPO), their test results, Table 3 and its figure, the metrics. ``tasks/alfred.py`` wraps the training as
a Prefect task; ``flows/alfred_port.py`` orchestrates and writes the outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..actors.bootstrap import TrainSettings, train_bootstrap_actor
from ..actors.hf import HFActor
from ..config.alfred_port import AlfredPortConfig
from ..config.shared import ModelShape
from ..envs.household.env import load_task_dir
from ..evaluation.plots import plot_grouped_bars
from ..evaluation.selection import OUTCOMES, floor_from, metrics_only
from ..train.safebranch import train_branchpo, train_sft
from .corpus import CATEGORIES, Turn, load_corpus, matches
from .port import base_examples, build_pairs, port_metrics, predict, record_corpus, sft_rows

PARTS = ("train", "dev", "test")
SLUGS = ("base", "base_hint", "sft", "branchpo")  # the methods of Table 3, in order, as metric names


def load_turns(cfg: AlfredPortConfig, splits: Path) -> dict[str, list[Turn]]:
    """Train / dev / test turns: the ``corpus`` folder's files, or recorded from the household splits."""
    if cfg.corpus:
        out = {}
        for part in PARTS:
            turns, errors = load_corpus(Path(cfg.corpus) / f"{part}.json")
            for e in errors:
                print(f"skipped: {e}")
            out[part] = turns
        return out
    return {part: record_corpus(load_task_dir(splits / cfg.record[part])[0]) for part in PARTS}


def dev_evaluator(turns: list[Turn]) -> Callable[[HFActor], dict[str, Any]]:
    """The Selector's evaluation on the dev turns."""
    def evaluate(actor: HFActor) -> dict[str, Any]:
        preds = predict(actor, turns)
        m = port_metrics(turns, preds)
        hits = [(bool(t.hazard), int(matches(p, t.gold))) for t, p in zip(turns, preds, strict=True)]
        # the Selector keeps the best (ssr, sr): hazard accuracy is the port's safety, non-hazard its task ability
        return {"ssr": m["alfred/hazard_acc"], "sr": m["alfred/nonhazard_acc"], "srec": m["alfred/average_acc"],
                OUTCOMES: {"ssr": [h for hz, h in hits if hz], "sr": [h for hz, h in hits if not hz]}}

    return evaluate


def train_port(cfg: AlfredPortConfig, turns: dict[str, list[Turn]], models: Path) -> dict[str, object]:
    """Base actor, judged pairs, SFT then BranchPO (``models/{base,sft,branchpo}``), dev-selected checkpoints."""
    shape = ModelShape(**{k: getattr(cfg, k) for k in ModelShape.__dataclass_fields__})
    base_dir = models / "base"
    train_bootstrap_actor(base_examples(turns["train"], cfg.drop_prob, cfg.seed), base_dir, shape,
                          TrainSettings(sft=cfg.base_sft, seed=cfg.seed), max_new_tokens=24)
    base = HFActor(base_dir, batch_size=64)
    pairs, funnel = build_pairs(turns["train"], predict(base, turns["train"]), predict(base, turns["train"], hint=True))
    rows = [p.row() for p in pairs]
    evaluate = dev_evaluator(turns["dev"])
    base_dev = metrics_only(evaluate(base))
    floor = floor_from(base_dev["sr"], cfg.max_dev_sr_drop)  # dev non-hazard accuracy the port must keep
    sft = train_sft(base_dir, sft_rows(rows, turns["train"], cfg.sft_data), models / "sft", cfg.sft, cfg.seed,
                    evaluate=evaluate, eval_every=cfg.eval_every.get("sft", 10), sr_floor=floor)
    bpo = train_branchpo(models / "sft", rows, models / "branchpo", cfg.branchpo, cfg.seed, evaluate=evaluate,
                         eval_every=cfg.eval_every.get("branchpo", 4), sr_floor=floor) if rows else None
    return {"rows": rows, "funnel": funnel, "sft": sft.metrics, "branchpo": bpo.metrics if bpo else {},
            "base_dev": {f"base_dev/{k}": v for k, v in base_dev.items()}}


def evaluate_methods(test: list[Turn], models: Path, sft_data: str) -> dict[str, dict[str, float]]:
    """Table 3's methods on the test turns: base, base with oracle hints, SFT, BranchPO (when trained)."""
    base = HFActor(models / "base", batch_size=64)
    results = {"Base actor": port_metrics(test, predict(base, test)),
               "Base + oracle hint (upper bound)": port_metrics(test, predict(base, test, hint=True)),
               f"SFT (chosen + {sft_data.replace('_', ' ')})": port_metrics(test, predict(HFActor(models / "sft", batch_size=64), test))}
    if (models / "branchpo").is_dir():
        results["BranchPO (SFT -> BranchPO)"] = port_metrics(test, predict(HFActor(models / "branchpo", batch_size=64), test))
    return results


def table3(results: dict[str, dict[str, float]]) -> str:
    head = "| method | " + " | ".join(CATEGORIES) + " | hazard | non-hazard | average |"
    lines = [head, "|" + "---|" * (len(CATEGORIES) + 4)]
    for method, m in results.items():
        cells = [f"{m[f'alfred/hazard/{c}']:.3f}" if f"alfred/hazard/{c}" in m else "-" for c in CATEGORIES]
        cells += [f"{m[k]:.3f}" for k in ("alfred/hazard_acc", "alfred/nonhazard_acc", "alfred/average_acc")]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    counts = next(iter(results.values()))
    lines.append("| test turns | " + " | ".join(f"{counts[f'alfred/hazard/{c}_turns']:.0f}" for c in CATEGORIES)
                 + f" | {counts['alfred/hazard_turns']:.0f} | {counts['alfred/nonhazard_turns']:.0f} | |")
    return "\n".join(lines) + "\n"


def table3_markdown(results: dict[str, dict[str, float]], funnel: dict[str, float], source: str) -> str:
    """``table3.md``: Table 3 and the pair funnel."""
    return (f"# Table 3 layout: SafetyALFRED port, test turns ({source})\n\n" + table3(results)
            + f"\nPairs: {funnel['alfred/hazard_turns']:.0f} train hazard turns -> {funnel['alfred/pairs_gated']:.0f} "
            f"gold-gated -> {funnel['alfred/pairs_judged']:.0f} judged; "
            + ", ".join(f"{c} {funnel[f'alfred/pairs_judged/{c}']:.0f}" for c in CATEGORIES) + "\n")


def category_figure(results: dict[str, dict[str, float]], path: Path) -> Path:
    return plot_grouped_bars({m: {**{c: r[f"alfred/hazard/{c}"] for c in CATEGORIES if f"alfred/hazard/{c}" in r},
                                  "non-hazard": r["alfred/nonhazard_acc"]} for m, r in results.items()},
                             path, "SafetyALFRED port: accuracy per hazard category (test turns)")


def port_summary(results: dict[str, dict[str, float]], funnel: dict[str, float]) -> dict[str, float]:
    """``data/alfred_metrics.json``: the funnel and every method's accuracies (``alfred/<method>/...``)."""
    slugs = dict(zip(results, SLUGS, strict=False))
    return {**funnel, **{k.replace("alfred/", f"alfred/{slugs[method]}/", 1): v for method, r in results.items()
                         for k, v in r.items() if not k.endswith("_turns")}}
