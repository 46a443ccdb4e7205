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

The steps: :mod:`embodied_safety.alfred.pipeline`; the training task: ``tasks/alfred.py``.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.alfred.corpus import write_corpus
from embodied_safety.alfred.pipeline import (
    category_figure,
    evaluate_methods,
    load_turns,
    port_summary,
    table3_markdown,
)
from embodied_safety.config.alfred_port import AlfredPortConfig
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json, write_jsonl
from embodied_safety.manifest import write_manifest
from flows._stage import Plot, Stage
from tasks.alfred import train_task
from tasks.tracking import log_artifacts, log_metrics, mlflow_run, tracking_config

SPLITS = Path("data/household/splits")
DATA = Path("data/alfred")
MODELS = Path("models/alfred")
METRICS = Path("data/alfred_metrics.json")


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
        results = evaluate_methods(turns["test"], models_tmp, cfg.sft_data)
        funnel = trained["funnel"]
        atomic_write_text(data_tmp / "table3.md", table3_markdown(results, funnel, source))
        png = category_figure(results, data_tmp / "per_category.png")
        for path in (data_tmp, models_tmp):
            write_manifest(path, cfg, inputs=[Path(cfg.corpus)] if cfg.corpus else [splits / s for s in cfg.record.values()])
        replace_dir(data_tmp, data)
        replace_dir(models_tmp, models)
        metrics = port_summary(results, funnel)
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
