"""Stage ``alfred_port``: the SafetyALFRED port of SafeBranch (paper B.6, Table 3), offline.

1. Corpus: ``train`` / ``dev`` / ``test`` turns in the SafetyALFRED format, loaded from
   ``alfred_port.corpus`` or recorded from the household splits (``data/alfred/corpus/*.json``).
2. Base actor (``models/alfred/base``): the embedded stand-in for the base VLM, trained on the
   train turns with most safety steps skipped, and to follow category hints.
3. Pairs: base vs hint-injected predictions on the train hazard turns, gold-gated, judged,
   relabelled (``data/alfred/pairs.jsonl``, funnel in the metrics).
4. SFT warm-up on the chosen side + the golden trajectories (every gold train turn; the household
   stage's mixture, ``sft_data``), then BranchPO on the pairs (``models/alfred/{sft,branchpo}``),
   each checkpoint selected on the dev turns by hazard accuracy subject to non-hazard accuracy >=
   the base actor's - ``max_dev_sr_drop`` (``evaluation.selection``), ties by non-hazard accuracy.
5. Table 3 (``data/alfred/table3.md``): per-category hazard accuracy, non-hazard accuracy and
   their average on the test turns, for the base actor, the base actor with oracle hints, SFT and
   BranchPO; ``per_category.png``; ``data/alfred_metrics.json``; one MLflow run.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from embodied_safety.actors.bootstrap import TrainSettings, train_bootstrap_actor
from embodied_safety.actors.hf import HFActor
from embodied_safety.alfred.corpus import CATEGORIES, Turn, load_corpus, write_corpus
from embodied_safety.alfred.port import (
    base_examples,
    build_pairs,
    port_metrics,
    predict,
    record_corpus,
    sft_rows,
)
from embodied_safety.config import AlfredPortConfig, ModelShape
from embodied_safety.envs.household.env import load_task_dir
from embodied_safety.evaluation.plots import plot_grouped_bars
from embodied_safety.evaluation.selection import floor_from
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json, write_jsonl
from embodied_safety.manifest import write_manifest
from embodied_safety.train.safebranch import train_branchpo, train_sft
from flows._stage import Plot, Stage
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

SPLITS = Path("data/household/splits")
DATA = Path("data/alfred")
MODELS = Path("models/alfred")
METRICS = Path("data/alfred_metrics.json")
PARTS = ("train", "dev", "test")


def load_turns(cfg: AlfredPortConfig, splits: Path) -> dict[str, list[Turn]]:
    if cfg.corpus:
        out = {}
        for part in PARTS:
            turns, errors = load_corpus(Path(cfg.corpus) / f"{part}.json")
            for e in errors:
                print(f"skipped: {e}")
            out[part] = turns
        return out
    return {part: record_corpus(load_task_dir(splits / cfg.record[part])[0]) for part in PARTS}


def _dev_evaluator(turns: list[Turn]):  # noqa: ANN202 - the Selector's Evaluate callable
    def evaluate(actor: HFActor) -> dict[str, float]:
        m = port_metrics(turns, predict(actor, turns))
        # the Selector keeps the best (ssr, sr): hazard accuracy is the port's safety, non-hazard its task ability
        return {"ssr": m["alfred/hazard_acc"], "sr": m["alfred/nonhazard_acc"], "srec": m["alfred/average_acc"]}

    return evaluate


@task(name="alfred-train", cache_policy=NO_CACHE, log_prints=False)
def train_task(cfg: AlfredPortConfig, turns: dict[str, list[Turn]], models: Path) -> dict[str, object]:
    shape = ModelShape(**{k: getattr(cfg, k) for k in ModelShape.__dataclass_fields__})
    base_dir = models / "base"
    train_bootstrap_actor(base_examples(turns["train"], cfg.drop_prob, cfg.seed), base_dir, shape,
                          TrainSettings(sft=cfg.base_sft, seed=cfg.seed), max_new_tokens=24)
    base = HFActor(base_dir, batch_size=64)
    pairs, funnel = build_pairs(turns["train"], predict(base, turns["train"]), predict(base, turns["train"], hint=True))
    rows = [p.row() for p in pairs]
    evaluate = _dev_evaluator(turns["dev"])
    base_dev = evaluate(base)
    floor = floor_from(base_dev["sr"], cfg.max_dev_sr_drop)  # dev non-hazard accuracy the port must keep
    sft = train_sft(base_dir, sft_rows(rows, turns["train"], cfg.sft_data), models / "sft", cfg.sft, cfg.seed,
                    evaluate=evaluate, eval_every=cfg.eval_every.get("sft", 10), sr_floor=floor)
    bpo = train_branchpo(models / "sft", rows, models / "branchpo", cfg.branchpo, cfg.seed, evaluate=evaluate,
                         eval_every=cfg.eval_every.get("branchpo", 4), sr_floor=floor) if rows else None
    return {"rows": rows, "funnel": funnel, "sft": sft.metrics, "branchpo": bpo.metrics if bpo else {},
            "base_dev": {f"base_dev/{k}": v for k, v in base_dev.items()}}


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


@flow(name="alfred_port", log_prints=True)
def alfred_port(cfg: AlfredPortConfig = AlfredPortConfig(), splits: Path = SPLITS, data: Path = DATA,
                models: Path = MODELS, metrics_path: Path = METRICS) -> dict[str, float]:
    turns = load_turns(cfg, splits)
    print(", ".join(f"{p}: {len(t)} turns ({sum(x.hazard is not None for x in t)} hazard)" for p, t in turns.items()))
    source = cfg.corpus or f"recorded from the household splits {cfg.record}"
    # the run opens before training, so its duration (and system metrics) cover the fit
    with mlflow_run(tracking_config(cfg.tracking), "alfred-port", params={"corpus": source, "drop_prob": cfg.drop_prob}):
        data_tmp, models_tmp = scratch_dir(data), scratch_dir(models)
        for part, ts in turns.items():
            write_corpus(data_tmp / "corpus" / f"{part}.json", ts)
        trained = train_task(cfg, turns, models_tmp)
        write_jsonl(data_tmp / "pairs.jsonl", trained["rows"])
        test = turns["test"]
        base = HFActor(models_tmp / "base", batch_size=64)
        results = {"Base actor": port_metrics(test, predict(base, test)),
                   "Base + oracle hint (upper bound)": port_metrics(test, predict(base, test, hint=True)),
                   f"SFT (chosen + {cfg.sft_data.replace('_', ' ')})": port_metrics(test, predict(HFActor(models_tmp / "sft", batch_size=64), test))}
        if (models_tmp / "branchpo").is_dir():
            results["BranchPO (SFT -> BranchPO)"] = port_metrics(test, predict(HFActor(models_tmp / "branchpo", batch_size=64), test))
        funnel = trained["funnel"]
        atomic_write_text(data_tmp / "table3.md", f"# Table 3 layout: SafetyALFRED port, test turns ({source})\n\n"
                          + table3(results) + f"\nPairs: {funnel['alfred/hazard_turns']:.0f} train hazard turns -> "
                          f"{funnel['alfred/pairs_gated']:.0f} gold-gated -> {funnel['alfred/pairs_judged']:.0f} judged; "
                          + ", ".join(f"{c} {funnel[f'alfred/pairs_judged/{c}']:.0f}" for c in CATEGORIES) + "\n")
        png = plot_grouped_bars({m: {**{c: r[f"alfred/hazard/{c}"] for c in CATEGORIES if f"alfred/hazard/{c}" in r},
                                     "non-hazard": r["alfred/nonhazard_acc"]} for m, r in results.items()},
                                data_tmp / "per_category.png", "SafetyALFRED port: accuracy per hazard category (test turns)")
        for path in (data_tmp, models_tmp):
            write_manifest(path, cfg, inputs=[Path(cfg.corpus)] if cfg.corpus else [splits / s for s in cfg.record.values()])
        replace_dir(data_tmp, data)
        replace_dir(models_tmp, models)
        slugs = dict(zip(results, ("base", "base_hint", "sft", "branchpo"), strict=False))
        metrics = {**funnel, **{k.replace("alfred/", f"alfred/{slugs[method]}/", 1): v for method, r in results.items()
                                for k, v in r.items() if not k.endswith("_turns")}}
        log_metrics(metrics)
        log_metrics({f"train/{k}": v for k, v in {**trained["sft"], **trained["branchpo"], **trained["base_dev"]}.items()})
        log_artifacts([data / "table3.md", data / png.name, data / png.with_suffix(".json").name])
    write_json(metrics_path, metrics)
    print((data / "table3.md").read_text())
    return metrics


STAGE = Stage("alfred_port", alfred_port, config=AlfredPortConfig, inputs={"splits": str(SPLITS)},
              outs=(str(DATA), str(MODELS)), metrics=str(METRICS), plots=(Plot(f"{DATA}/per_category.png", "bars", y_label="rate"),))
main = STAGE.main

if __name__ == "__main__":
    main()
