"""Stage ``evaluate_scripted``: every scripted policy on every split of the suite.

Each (policy, split) pair is one shard (a Prefect task); results go to
``data/household/eval/<policy>/<split>/``, a summary to ``data/household/eval_metrics.json`` and the policy x
split table (SR, SSR, SRec: the stage's headline on its Prefect flow run) to ``data/household/eval/table.md``.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.config.evaluate_scripted import EvaluateScriptedConfig
from embodied_safety.envs.household.episode import EpisodeOptions
from embodied_safety.evaluation.report import table2
from embodied_safety.io import atomic_write_text, replace_dir, scratch_dir, write_json
from embodied_safety.manifest import write_manifest
from flows._stage import Plot, Stage
from tasks.household import evaluate_dir_task

SPLITS_DIR = Path("data/household/splits")
OUT = Path("data/household/eval")
SUMMARY = Path("data/household/eval_metrics.json")
HEADLINE = ("eval/sr", "eval/ssr", "eval/srec", "eval/n_tasks", "eval/load_failures", "eval/sr_all", "eval/ssr_all")


@flow(name="evaluate_scripted", log_prints=True)
def evaluate_scripted(cfg: EvaluateScriptedConfig = EvaluateScriptedConfig(), splits_dir: Path = SPLITS_DIR,
                      out: Path = OUT, summary: Path = SUMMARY) -> dict[str, dict[str, dict[str, object]]]:
    tmp = scratch_dir(out)
    options = EpisodeOptions(invalid_output=cfg.invalid_output, upstream_parity=cfg.upstream_parity)
    futures = {(p, s): evaluate_dir_task.submit(splits_dir / s, p, tmp / p / s, cfg.seed, cfg.extra_steps, None, options)
               for p in cfg.policies for s in cfg.splits}
    table: dict[str, dict[str, dict[str, object]]] = {}
    for (policy, split), fut in futures.items():
        m = fut.result()
        table.setdefault(policy, {})[split] = {k: m[k] for k in HEADLINE}
        print(f"{policy:14s} {split:16s} SR {m['eval/sr']:.3f} SSR {m['eval/ssr']:.3f} SRec {m['eval/srec']:.3f}")
    cells = {p: {f"{s}/{k}": float(m[f"eval/{k}"]) for s, m in row.items() for k in ("sr", "ssr", "srec")}
             for p, row in table.items()}
    atomic_write_text(tmp / "table.md", f"# Scripted policies on every split (seed {cfg.seed})\n\n"
                      + table2(cells, list(cfg.splits)))
    write_manifest(tmp, cfg, inputs=[splits_dir])
    replace_dir(tmp, out)
    write_json(summary, table)
    return table


STAGE = Stage("evaluate_scripted", evaluate_scripted, config=EvaluateScriptedConfig,
              inputs={"splits_dir": str(SPLITS_DIR)}, outs=(str(OUT),), metrics=str(SUMMARY),
              plots=tuple(Plot(f"{OUT}/{p}/{s}/per_risk.png", "bars", y_label="triggered conditions") for p, s in (
                  ("golden", "test"), ("golden_unsafe", "test"), ("golden_unsafe", "ood_objectshift"),
                  ("golden_unsafe", "ood_taskshift"))))
main = STAGE.main

if __name__ == "__main__":
    main()
