"""Stage ``report``: every result the paper shows, rendered from the stages' outputs into ``reports/``
(:func:`embodied_safety.evaluation.render.render`; each table has one function in ``evaluation/report.py``).

| file | paper | source |
|---|---|---|
| `table2.md` | Table 2 (+ inference-time baselines, best marked; the base without proxy names) | `models/safebranch_metrics.json`, `data/baselines_metrics.json`, `models/bootstrap_actor_metrics.json` |
| `table2_seeds.md` | Table 2, mean ± std over seeds | `models/safebranch/results.json` |
| `table14.md` | Table 14 (with test-time cost) | the same as `table2.md` |
| `table12_funnel.md`, `fig3b_funnel.png` | Table 12 / Fig. 3b | `data/branches/funnel.json` (the chart copied) |
| `fig3a_efficiency.png` | Fig. 3a | `data/branches/funnel.json` (efficiency/*) |
| `fig3c_filtering.{md,png}` | Fig. 3c | `models/safebranch_metrics.json` (variants safebranch_extracted / _judged / safebranch) |
| `table13_fb.md` | Table 13 (+FB ablation) | `models/safebranch/results.json` (all variants only with `make study`) |
| `table15_dynamics.md`, `fig_dynamics.png` | Table 15 | `models/safebranch/results.json` (dev curves; the figure is the stage's `dev_curves.png`) |
| `table16_per_risk.md`, `table16_per_risk_<split>.png` | Table 16 / Box 17 | `models/safebranch/results.json` (per-risk counts; the stage's figures) |
| `sweep.md` | the learning-rate sweep | `models/safebranch/results.json` |
| `paired.md` | per-task paired bootstrap CIs (issue 20) | `models/safebranch/results.json` (`paired`) |
| `table3_alfred.md`, `fig_alfred.png` | Table 3 | `data/alfred/table3.md`, `data/alfred_metrics.json` |
| `agentbench.md`, `agentbench_*.png` | SafeAgentBench Tables 2-3, Fig. 6 | `data/agentbench/tables.md` |
| `shield_tables.md` | ShieldVLA Tables 2-7 (all envs) | `data/shield/ppo/<env>/results.json` |
| `shield_<env>.md`, `shield_<env>_{curves,bars,safe_set}.png` | ShieldVLA per env (+ gate check), Fig. 3 | `data/shield/ppo/<env>/` |
| `gpu_runs.md` | SmolLM2 Table 2 and the Dubins-VL study from GPU leases | `benchmarks/gpu_runs/<date>/` (committed) |

Each Markdown file ends with its provenance: the code key of this stage and the content hash of every input
it was rendered from (no commit or run id: the files are DVC outputs, identical for identical inputs).
``reports/index.md`` lists every file with the same provenance (figures included); one MLflow run
(``report``, tagged with the ``git_commit``) holds them all.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from embodied_safety.codekey import cached_code_key
from embodied_safety.evaluation.render import render
from embodied_safety.shield.rl.report import render_tables
from embodied_safety.train.variants import LABELS
from flows._stage import Out, Stage
from tasks.tracking import log_artifacts, mlflow_run, tracking_config

OUT = Path("reports")
SAFEBRANCH = Path("models/safebranch")
SB_METRICS = Path("models/safebranch_metrics.json")
BOOT_METRICS = Path("models/bootstrap_actor_metrics.json")  # the base actor's OOD numbers without proxy names
BASELINES = Path("data/baselines_metrics.json")
FUNNEL = Path("data/branches/funnel.json")
ALFRED = Path("data/alfred")
ALFRED_METRICS = Path("data/alfred_metrics.json")
AGENTBENCH = Path("data/agentbench")
SHIELD = Path("data/shield/ppo")
GPU_RUNS = Path("benchmarks/gpu_runs")  # committed: one folder per GPU lease (benchmarks/gpu_lease.sh)


@flow(name="report", log_prints=True)
def report(out: Path = OUT, safebranch: Path = SAFEBRANCH, sb_metrics: Path = SB_METRICS, baselines: Path = BASELINES,
           funnel_path: Path = FUNNEL, alfred: Path = ALFRED, alfred_metrics: Path = ALFRED_METRICS,
           agentbench: Path = AGENTBENCH, shield: Path = SHIELD, gpu_runs: Path = GPU_RUNS,
           boot_metrics: Path = BOOT_METRICS) -> list[str]:
    with mlflow_run(tracking_config(), "report") as run:
        names = render(cached_code_key(*STAGE.code_modules), out, safebranch, sb_metrics, baselines, funnel_path,
                       alfred, alfred_metrics, agentbench, LABELS, shield,
                       lambda rows: render_tables(rows, "ShieldVLA part 2, all environments"), gpu_runs, boot_metrics)
        log_artifacts([out / n for n in names] + [out / "index.md"])
    print(f"{len(names)} report files in {out}/ (MLflow run {run.info.run_id}): {', '.join(names)}")
    return names


STAGE = Stage("report", report, inputs={
    "safebranch": str(SAFEBRANCH), "sb_metrics": str(SB_METRICS), "baselines": str(BASELINES),
    "funnel_path": str(FUNNEL), "alfred": str(ALFRED), "alfred_metrics": str(ALFRED_METRICS),
    "agentbench": str(AGENTBENCH), "shield": str(SHIELD), "gpu_runs": str(GPU_RUNS),
    "boot_metrics": str(BOOT_METRICS)},
              outs=(Out(str(OUT), cache=False),))  # the rendered tables and figures, kept in git (small)
main = STAGE.main

if __name__ == "__main__":
    main()
