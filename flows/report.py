"""Stage ``report``: every result the paper shows, rendered from the stages' outputs into ``reports/``.

| file | paper | source |
|---|---|---|
| `table2.md` | Table 2 (+ inference-time baselines, best marked) | `models/safebranch_metrics.json`, `data/baselines_metrics.json` |
| `table14.md` | Table 14 (with test-time cost) | the same |
| `table12_funnel.md`, `fig3b_funnel.png` | Table 12 / Fig. 3b | `data/branches/funnel.json` |
| `fig3a_efficiency.png` | Fig. 3a | `data/branches/funnel.json` (efficiency/*) |
| `table13_fb.md` | Table 13 (+FB ablation) | `models/safebranch/table13.md` (all variants only with `make study`) |
| `table15_dynamics.md`, `fig_dynamics.png` | Table 15 | `models/safebranch/results.json` (dev curves) |
| `paired.md` | per-task paired bootstrap CIs (issue 20) | `models/safebranch/results.json` (`paired`) |
| `table16_per_risk_<split>.png` | Table 16 / Box 17 | `models/safebranch/results.json` (per-risk counts) |
| `table3_alfred.md`, `fig_alfred.png` | Table 3 | `data/alfred/table3.md`, `data/alfred_metrics.json` |

| `fig3c_filtering.{md,png}` | Fig. 3c | `models/safebranch_metrics.json` (variants safebranch_extracted / _judged / safebranch) |

Each Markdown file ends with its provenance: the code key of this stage and the content hash of every input
it was rendered from (no commit or run id: the files are DVC outputs, identical for identical inputs).
``reports/index.md`` lists every file with the same provenance (figures included); one MLflow run
(``report``, tagged with the ``git_commit``) holds them all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from prefect import flow

from embodied_safety.codekey import cached_code_key
from embodied_safety.evaluation.plots import plot_grouped_bars, plot_per_risk, plot_series
from embodied_safety.evaluation.report import dynamics_table, funnel_table, paired_table, table2
from embodied_safety.io import atomic_write_text, read_json, replace_dir, scratch_dir
from embodied_safety.manifest import hash_path, write_manifest
from embodied_safety.train.variants import LABELS
from flows._stage import Stage
from tasks.tracking import log_artifacts, mlflow_run, tracking_config

OUT = Path("reports")
SAFEBRANCH = Path("models/safebranch")
SB_METRICS = Path("models/safebranch_metrics.json")
BASELINES = Path("data/baselines_metrics.json")
FUNNEL = Path("data/branches/funnel.json")
ALFRED = Path("data/alfred")
ALFRED_METRICS = Path("data/alfred_metrics.json")
AGENTBENCH = Path("data/agentbench")
SPLITS = ("test", "ood_objectshift", "ood_taskshift")
SPLIT_LABELS_SHORT = {"test": "ID", "ood_objectshift": "OOD-ObjectShift", "ood_taskshift": "OOD-TaskShift"}
ASIDE = {"sft_only_fb", "branchpo_only_fb", "safebranch_fb", "safebranch_extracted", "safebranch_judged"}  # own tables
FILTERING = {"extracted": "safebranch_extracted", "judge-kept": "safebranch_judged", "final (pruned)": "safebranch"}
BASELINE_LABELS = {"self_verification": "Self-Verification (Alg. 1, rule verifier)",
                   "lookahead": "Lookahead (Alg. 2, k = 2, rule value)", "full_critic": "Runtime full-critic (F.4, rule critics)"}


def provenance(code: str, *inputs: Path) -> str:
    """The code key and the content hash of every input that exists (deterministic: the commit and the MLflow run
    id are tags of the ``report`` MLflow run, not part of the hashed report files)."""
    parts = [f"`{p}` {hash_path(p)[:12]}" for p in inputs if p.exists()]
    return f"\n_Rendered by code {code} from {', '.join(parts)}; commit and MLflow run: tags of MLflow run `report`._\n"


def _methods(sb: dict[str, float], bl: dict[str, float]) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    methods: dict[str, dict[str, float]] = {}
    variants = sorted({k.split("/")[1] for k in sb if k.startswith("eval/") and k.count("/") == 3})
    for v in ["base", *[x for x in variants if x != "base" and x not in ASIDE]]:
        cells = {f"{s}/{k}": sb[f"eval/{v}/{s}/{k}"] for s in SPLITS for k in ("sr", "ssr", "srec") if f"eval/{v}/{s}/{k}" in sb}
        if cells:
            methods[LABELS.get(v, v)] = cells
    cost = {label: "0" for label in methods}
    for b, label in BASELINE_LABELS.items():
        cells = {f"{s}/{k}": bl[f"baselines/{b}/{s}/{k}"] for s in SPLITS for k in ("sr", "ssr", "srec")
                 if f"baselines/{b}/{s}/{k}" in bl}
        if cells:
            methods[label] = cells
            cost[label] = f"{sum(bl.get(f'baselines/{b}/{s}/cost/module_calls', 0) for s in SPLITS):.0f}"
    return methods, cost


@flow(name="report", log_prints=True)
def report(out: Path = OUT, safebranch: Path = SAFEBRANCH, sb_metrics: Path = SB_METRICS, baselines: Path = BASELINES,
           funnel_path: Path = FUNNEL, alfred: Path = ALFRED, alfred_metrics: Path = ALFRED_METRICS,
           agentbench: Path = AGENTBENCH) -> list[str]:
    with mlflow_run(tracking_config(), "report") as run:
        names = _render(cached_code_key(*STAGE.code_modules), out, safebranch, sb_metrics, baselines, funnel_path,
                        alfred, alfred_metrics, agentbench)
        log_artifacts([out / n for n in names] + [out / "index.md"])
    print(f"{len(names)} report files in {out}/ (MLflow run {run.info.run_id}): {', '.join(names)}")
    return names


def _render(code: str, out: Path, safebranch: Path, sb_metrics: Path, baselines: Path, funnel_path: Path,
            alfred: Path, alfred_metrics: Path, agentbench: Path = AGENTBENCH) -> list[str]:
    tmp = scratch_dir(out)
    written: list[Path] = []

    def md(name: str, title: str, body: str, *inputs: Path) -> None:
        written.append(atomic_write_text(tmp / name, f"# {title}\n\n{body}{provenance(code, *inputs)}"))

    sb = read_json(sb_metrics) if sb_metrics.exists() else {}
    bl = read_json(baselines) if baselines.exists() else {}
    methods, cost = _methods(sb, bl)
    if methods:
        md("table2.md", "Table 2: critic-free methods and inference-time baselines (best per column in bold)",
           table2(methods, SPLITS, cost) + "\nModule calls: verifier / value / critic calls at test time, all splits.\n",
           sb_metrics, baselines)
        pick = {k: v for k, v in methods.items() if k.startswith(("Runtime full-critic", "SafeBranch", "Base"))}
        md("table14.md", "Table 14: runtime full-critic vs SafeBranch (critic-free), with test-time cost",
           table2(pick, SPLITS, cost), sb_metrics, baselines)
    stages = {label: {f"{sp}/{k}": sb[f"eval/{v}/{sp}/{k}"] for sp in SPLITS for k in ("sr", "ssr", "srec")}
              for label, v in FILTERING.items() if f"eval/{v}/test/ssr" in sb}
    if len(stages) == len(FILTERING):
        md("fig3c_filtering.md", "Fig. 3c: downstream effect of the filtering stages (SafeBranch's SFT, then BranchPO on each stage's pairs)",
           table2(stages, SPLITS), sb_metrics)
        written.append(plot_grouped_bars({label: {SPLIT_LABELS_SHORT[sp]: m[f"{sp}/ssr"] for sp in SPLITS}
                                          for label, m in stages.items()},
                                         tmp / "fig3c_filtering.png", "Fig. 3c: test SSR of SafeBranch trained on the "
                                         "pairs after each funnel stage", ylabel="SSR"))
    if funnel_path.exists():
        f = read_json(funnel_path)
        md("table12_funnel.md", "Table 12: branch-pair funnel (extracted -> judge-kept -> final)",
           funnel_table(f) + f"\nJudge keep rate {f.get('data/judge_keep_rate', 0):.3f}; repair acceptance "
           f"{f.get('data/repair_acceptance', 0):.3f}.\n", funnel_path)
        chart = funnel_path.with_name("funnel_chart.png")
        if chart.exists():
            shutil.copy2(chart, tmp / "fig3b_funnel.png")
        written.append(plot_grouped_bars(
            {"pairs per episode": {"natural sampling": f["efficiency/natural_pairs_per_episode"],
                                   "SafeBranch branches": f["efficiency/branch_pairs_per_episode"]}},
            tmp / "fig3a_efficiency.png",
            f"Fig. 3a: usable pairs per episode, ratio {f['efficiency/ratio']:.1f}x", ylabel="pairs per episode"))
    results = safebranch / "results.json"
    if results.exists():
        r = read_json(results)
        first = [run for run in r["runs"] if run["seed"] == r["runs"][0]["seed"]]
        curves = {LABELS.get(run["variant"], run["variant"]): run["phases"][-1]["curve"] for run in first}
        floor = r.get("sr_floor")
        md("table15_dynamics.md", "Table 15: training dynamics and checkpoint selection (dev split, last phase)",
           dynamics_table(curves, floor) + ("" if floor is None else f"\nSelected: max dev SSR with dev SR >= {floor:.3f} "
                                             "(base dev SR - margin), else max SR.\n"), results)
        if r.get("paired"):
            md("paired.md", "SafeBranch vs SFT-only vs golden replay only: per-task paired differences",
               paired_table(r["paired"], SPLITS) + "\nMean over test tasks of the per-task difference (each task averaged "
               "over seeds), 95 % paired-bootstrap interval; * = the interval excludes 0.\n", results)
        written.append(plot_series({f"dev {k.upper()}": {v: [(p["step"], p[k]) for p in c] for v, c in curves.items()}
                                    for k in ("ssr", "sr")}, tmp / "fig_dynamics.png", "Training dynamics (dev)"))
        for split in SPLITS:
            counts: dict[str, list[int]] = {}
            for run in (x for x in r["runs"] if x["variant"] == "safebranch"):
                for risk, (sat, tot) in run["risks"].get(split, {}).items():
                    c = counts.setdefault(risk, [0, 0])
                    c[0], c[1] = c[0] + sat, c[1] + tot
            if counts:
                written.append(plot_per_risk({k: (v[0], v[1]) for k, v in counts.items()},
                                             tmp / f"table16_per_risk_{split}.png",
                                             f"Table 16: SafeBranch per-risk SRec, {SPLIT_LABELS_SHORT.get(split, split)}"))
    if (safebranch / "table13.md").exists():
        md("table13_fb.md", "Table 13: +FB ablation", (safebranch / "table13.md").read_text().split("\n", 2)[2] +
           "\nThe default params train SFT-only +FB and SafeBranch +FB on seed 0; `make study` adds "
           "BranchPO-only +FB and seeds 1-2.\n",
           safebranch / "table13.md")
    if (alfred / "table3.md").exists():
        md("table3_alfred.md", "Table 3: SafetyALFRED port", (alfred / "table3.md").read_text().split("\n", 2)[2],
           alfred / "table3.md", alfred_metrics)
        if (alfred / "per_category.png").exists():
            written.append(Path(shutil.copy2(alfred / "per_category.png", tmp / "fig_alfred.png")))
    if (agentbench / "tables.md").exists():
        md("agentbench.md", "SafeAgentBench: rejection, risk and success (SafeAgentBench Tables 2-3, Fig. 6 layout)",
           (agentbench / "tables.md").read_text().split("\n", 2)[2], agentbench / "metrics.json")
        for png in sorted(agentbench.glob("*.png")):
            written.append(Path(shutil.copy2(png, tmp / f"agentbench_{png.name}")))
    written += [tmp / "fig3b_funnel.png"] if (tmp / "fig3b_funnel.png").exists() else []
    names = sorted({p.name for p in written})
    atomic_write_text(tmp / "index.md", "# Reports\n\n" + "\n".join(f"* [{n}]({n})" for n in names) + "\n"
                      + provenance(code, sb_metrics, safebranch / "results.json", baselines, funnel_path, alfred_metrics))
    write_manifest(tmp, {"files": names}, inputs=[p for p in (sb_metrics, baselines, funnel_path, alfred_metrics) if p.exists()])
    replace_dir(tmp, out)
    return names



STAGE = Stage("report", report, inputs={
    "safebranch": str(SAFEBRANCH), "sb_metrics": str(SB_METRICS), "baselines": str(BASELINES),
    "funnel_path": str(FUNNEL), "alfred": str(ALFRED), "alfred_metrics": str(ALFRED_METRICS),
    "agentbench": str(AGENTBENCH)}, outs=(str(OUT),))
main = STAGE.main

if __name__ == "__main__":
    main()
