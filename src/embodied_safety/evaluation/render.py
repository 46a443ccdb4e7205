"""The report stage's renderer: every file of ``reports/`` from the stages' outputs (``flows/report.py`` runs it).

The stages write data (metrics files, ``results.json``) and their figures; the tables are rendered here, each by
one function of :mod:`embodied_safety.evaluation.report`. Figures a stage drew are copied, not redrawn. The
SafetyALFRED and SafeAgentBench tables are their stages' own files (``table3.md``, ``tables.md``), included; so are
ShieldVLA part 2's per-env tables, and its all-environment tables are rendered here from every env's
``results.json`` by ``shield_tables`` (``shield.rl.report.render_tables``, passed in by the stage).
Variant names come in as ``labels`` (``train.variants.LABELS``: evaluation does not import train).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from ..io import atomic_write_text, read_json, replace_dir, scratch_dir
from ..manifest import hash_path, write_manifest
from .plots import plot_grouped_bars
from .report import (
    dynamics_table,
    fb_table,
    funnel_table,
    paired_table,
    risk_table,
    seed_table,
    study_rows,
    sweep_table,
    table2,
)

SPLITS = ("test", "ood_objectshift", "ood_taskshift")
SPLIT_LABELS_SHORT = {"test": "ID", "ood_objectshift": "OOD-ObjectShift", "ood_taskshift": "OOD-TaskShift"}
ASIDE = {"sft_only_fb", "branchpo_only_fb", "safebranch_fb", "safebranch_extracted", "safebranch_judged"}  # own tables
FILTERING = {"extracted": "safebranch_extracted", "judge-kept": "safebranch_judged", "final (pruned)": "safebranch"}
BASELINE_LABELS = {"self_verification": "Self-Verification (Alg. 1, rule verifier)",
                   "lookahead": "Lookahead (Alg. 2, k = 2, rule value)", "full_critic": "Runtime full-critic (F.4, rule critics)"}


SCALES = {"demo": "demo budget (`make demo`: one seed, the Table 2 core, short training); the claims are measured "
                  "at the study budget (`make study`, docs/training.md)",
          "study": "study budget (`make study`: 3 seeds, every variant, learning-rate sweeps)"}


def provenance(code: str, *inputs: Path, scale: str = "") -> str:
    """The code key and the content hash of every input that exists (deterministic: the commit and the MLflow run
    id are tags of the ``report`` MLflow run, not part of the hashed report files), and the budget of the SafeBranch
    results it was rendered from (``safebranch.scale``)."""
    parts = [f"`{p}` {hash_path(p)[:12]}" for p in inputs if p.exists()]
    budget = f" Budget: {SCALES.get(scale, scale)}." if scale else ""
    return (f"\n_Rendered by code {code} from {', '.join(parts)}; commit and MLflow run: tags of MLflow run "
            f"`report`._{budget}\n")


#: Table 2's row for the base actor without proxy names (``models/bootstrap_actor_metrics.json``: ``{split}/plain_*``)
PLAIN_BASE = "Base without proxy names (actors/proxy.py)"


def methods(sb: dict[str, float], bl: dict[str, float], labels: Mapping[str, str],
            boot: Mapping[str, float] | None = None) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Table 2's rows (the critic-free variants, then the inference-time baselines) and each one's test-time cost;
    with the bootstrap stage's metrics ``boot``, the base actor's OOD numbers without proxy names below its own."""
    rows: dict[str, dict[str, float]] = {}
    variants = sorted({k.split("/")[1] for k in sb if k.startswith("eval/") and k.count("/") == 3})
    for v in ["base", *[x for x in variants if x != "base" and x not in ASIDE]]:
        cells = {f"{s}/{k}": sb[f"eval/{v}/{s}/{k}"] for s in SPLITS for k in ("sr", "ssr", "srec") if f"eval/{v}/{s}/{k}" in sb}
        if cells:
            rows[labels.get(v, v)] = cells
        plain = {f"{s}/{k}": (boot or {})[f"{s}/plain_{k}"] for s in SPLITS for k in ("sr", "ssr")
                 if f"{s}/plain_{k}" in (boot or {})}
        if v == "base" and plain:
            rows[PLAIN_BASE] = plain
    cost = {label: "0" for label in rows}
    for b, label in BASELINE_LABELS.items():
        cells = {f"{s}/{k}": bl[f"baselines/{b}/{s}/{k}"] for s in SPLITS for k in ("sr", "ssr", "srec")
                 if f"baselines/{b}/{s}/{k}" in bl}
        if cells:
            rows[label] = cells
            cost[label] = f"{sum(bl.get(f'baselines/{b}/{s}/cost/module_calls', 0) for s in SPLITS):.0f}"
    return rows, cost


def render(code: str, out: Path, safebranch: Path, sb_metrics: Path, baselines: Path, funnel_path: Path,
           alfred: Path, alfred_metrics: Path, agentbench: Path, labels: Mapping[str, str], shield: Path | None = None,
           shield_tables: Callable[[list[dict]], str] | None = None, gpu_runs: Path | None = None,
           boot_metrics: Path | None = None) -> list[str]:
    """Write ``out`` whole (scratch folder, swapped in): every table and figure, ``index.md``, the manifest; the names.
    ``shield``: ShieldVLA part 2's output root (``<env>/{results.json,tables.md,*.png}``); ``gpu_runs``: one folder
    per GPU lease (``benchmarks/gpu_lease.sh``: the SmolLM2 chain's and the Dubins-VL study's tables and logs)."""
    tmp = scratch_dir(out)
    written: list[Path] = []
    results = safebranch / "results.json"
    scale = str(read_json(results).get("scale", "")) if results.exists() else ""

    def md(name: str, title: str, body: str, *inputs: Path) -> None:
        written.append(atomic_write_text(tmp / name, f"# {title}\n\n{body}{provenance(code, *inputs, scale=scale)}"))

    def copy(src: Path, name: str) -> None:
        if src.exists():
            written.append(Path(shutil.copy2(src, tmp / name)))

    sb = read_json(sb_metrics) if sb_metrics.exists() else {}
    bl = read_json(baselines) if baselines.exists() else {}
    boot = read_json(boot_metrics) if boot_metrics is not None and boot_metrics.exists() else {}
    rows, cost = methods(sb, bl, labels, boot)
    if rows:
        plain = (f"\n{PLAIN_BASE}: the same base actor with the object words it never wrote shown as they are; every "
                 "other row uses proxy names (docs/actors.md).\n" if PLAIN_BASE in rows else "")
        md("table2.md", "Table 2: critic-free methods and inference-time baselines (best per column in bold)",
           table2(rows, SPLITS, cost) + "\nModule calls: verifier / value / critic calls at test time, all splits.\n"
           + plain, sb_metrics, baselines, *([boot_metrics] if boot else []))
        pick = {k: v for k, v in rows.items() if k.startswith(("Runtime full-critic", "SafeBranch", "Base"))}
        md("table14.md", "Table 14: runtime full-critic vs SafeBranch (critic-free), with test-time cost",
           table2(pick, SPLITS, cost), sb_metrics, baselines)
    stages = {label: {f"{sp}/{k}": sb[f"eval/{v}/{sp}/{k}"] for sp in SPLITS for k in ("sr", "ssr", "srec")}
              for label, v in FILTERING.items() if all(f"eval/{v}/{sp}/{k}" in sb for sp in SPLITS for k in ("sr", "ssr", "srec"))}
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
        copy(funnel_path.with_name("funnel_chart.png"), "fig3b_funnel.png")
        written.append(plot_grouped_bars(
            {"pairs per episode": {"natural sampling": f["efficiency/natural_pairs_per_episode"],
                                   "SafeBranch branches": f["efficiency/branch_pairs_per_episode"]}},
            tmp / "fig3a_efficiency.png",
            f"Fig. 3a: usable pairs per episode, ratio {f['efficiency/ratio']:.1f}x", ylabel="pairs per episode"))
    if results.exists():
        _study(read_json(results), results, safebranch, md, copy, labels)
    if (alfred / "table3.md").exists():
        md("table3_alfred.md", "Table 3: SafetyALFRED port", (alfred / "table3.md").read_text().split("\n", 2)[2],
           alfred / "table3.md", alfred_metrics)
        copy(alfred / "per_category.png", "fig_alfred.png")
    if (agentbench / "tables.md").exists():
        md("agentbench.md", "SafeAgentBench: rejection, risk and success (SafeAgentBench Tables 2-3, Fig. 6 layout)",
           (agentbench / "tables.md").read_text().split("\n", 2)[2], agentbench / "metrics.json")
        for png in sorted(agentbench.glob("*.png")):
            copy(png, f"agentbench_{png.name}")
    shield_results = sorted(shield.glob("*/results.json")) if shield is not None and shield.is_dir() else []
    if shield_results:
        _shield(shield_results, shield_tables, md, copy)
    leases = sorted(p for p in gpu_runs.iterdir() if p.is_dir()) if gpu_runs is not None and gpu_runs.is_dir() else []
    if leases:
        md("gpu_runs.md", "GPU leases: SafeBranch on SmolLM2-135M and the Dubins-VL ShieldVLA study (one H200)",
           "".join(_lease(d) for d in leases), *sorted(f for d in leases for f in d.iterdir()))
    names = sorted({p.name for p in written})
    sources = (sb_metrics, baselines, funnel_path, alfred_metrics, *shield_results)
    atomic_write_text(tmp / "index.md", "# Reports\n\n" + "\n".join(f"* [{n}]({n})" for n in names) + "\n"
                      + provenance(code, sb_metrics, results, *sources[1:], scale=scale))
    write_manifest(tmp, {"files": names}, inputs=[p for p in sources if p.exists()])
    replace_dir(tmp, out)
    return names


#: what a lease folder may hold, in the order rendered: (file, heading, shown as a code block)
LEASE_FILES = (("notes.md", "What ran", False),
               ("smollm2_table2.md", "SmolLM2-135M + LoRA, Table 2", False),
               ("smollm2_paired.md", "SmolLM2-135M, per-task paired differences", False),
               ("smollm2.log", "SmolLM2-135M chain, progress lines", True),
               ("dubins_table.md", "Dubins-VL study runs", False))


def _lease(folder: Path) -> str:
    """One lease's section: its tables (their own titles demoted) and the chain's progress lines."""
    parts = [f"## Lease {folder.name}\n"]
    for name, heading, code in LEASE_FILES:
        if (folder / name).is_file():
            text = (folder / name).read_text().strip()
            parts.append(f"### {heading}\n\n" + (f"```\n{text}\n```" if code else _untitled(text).strip()) + "\n")
    return "\n".join(parts) + "\n"


def _shield(results: list[Path], tables: Callable[[list[dict]], str] | None, md: Callable[..., None],
            copy: Callable[[Path, str], None]) -> None:
    """ShieldVLA part 2: the all-environment tables (rendered from every env's rows), each env's own tables (with its
    gate check and gradient agreement) and its figures."""
    if tables is not None:
        rows = [row for f in results for row in read_json(f)["rows"]]
        md("shield_tables.md", "ShieldVLA part 2, all environments (Tables 2-7 layouts)", _untitled(tables(rows)),
           *results)
    for f in results:
        env = f.parent.name
        if (f.parent / "tables.md").exists():
            md(f"shield_{env}.md", f"ShieldVLA part 2, {env}", _untitled((f.parent / "tables.md").read_text()),
               f, f.parent / "gate_check.json")
        for png in ("curves.png", "bars.png", "safe_set.png"):
            copy(f.parent / png, f"shield_{env}_{png}")


def _untitled(text: str) -> str:
    """A rendered Markdown file under the report's own title: its ``# title`` line becomes an italic line."""
    first, _, rest = text.partition("\n")
    return f"_{first.removeprefix('# ').strip()}_\n{rest}" if first.startswith("# ") else text


def _study(r: dict, results: Path, safebranch: Path, md: Callable[..., None], copy: Callable[[Path, str], None],
           labels: Mapping[str, str]) -> None:
    """The SafeBranch study's tables from its ``results.json``; its figures copied from the stage's folder."""
    splits = tuple(r.get("eval_splits") or SPLITS)
    rows = study_rows(r)
    seeds = (f"seeds {r.get('seeds', sorted({run['seed'] for run in r['runs']}))}; critic-free, T = 0; "
             f"checkpoints selected on {r.get('dev_split', 'dev')}")
    if "base" in r and r["runs"]:
        md("table2_seeds.md", f"Table 2 over seeds (mean ± std over {seeds})", seed_table(rows, splits, labels), results)
    if any(v.endswith("_fb") for v in rows):
        md("table13_fb.md", f"Table 13: +FB ablation on {splits[0]} ({seeds})", fb_table(rows, splits[0], labels)
           + "\nThe default params train SFT-only +FB and SafeBranch +FB on seed 0; `make study` adds "
           "BranchPO-only +FB and seeds 1-2.\n", results)
    if "base_risks" in r:
        md("table16_per_risk.md", f"Table 16: per-risk-type SRec, safe/total summed over seeds ({seeds})",
           risk_table({"base (1 run, deterministic)": [r["base_risks"]],
                       "SafeBranch": [run["risks"] for run in r["runs"] if run["variant"] == "safebranch"]}, splits), results)
    if r.get("sweep"):
        md("sweep.md", f"Learning-rate sweep (seed {r['sweep'][0]['seed']}; picked by dev SSR, ties SR)",
           sweep_table(r["sweep"], r["learning_rates"], splits), results)
    first = [run for run in r["runs"] if run["seed"] == r["runs"][0]["seed"]]
    curves = {labels.get(run["variant"], run["variant"]): run["phases"][-1]["curve"] for run in first}
    floor = r.get("sr_floor")
    md("table15_dynamics.md", "Table 15: training dynamics and checkpoint selection (dev split, last phase)",
       dynamics_table(curves, floor) + ("" if floor is None else f"\nSelected: max dev SSR with dev SR >= {floor:.3f} "
                                         "(base dev SR - margin), else max SR.\n"), results)
    if r.get("paired"):
        md("paired.md", "SafeBranch vs SFT-only vs golden replay only: per-task paired differences",
           paired_table(r["paired"], splits) + "\nMean over test tasks of the per-task difference (each task averaged "
           "over seeds), 95 % paired-bootstrap interval; * = the interval excludes 0.\n", results)
    copy(safebranch / "dev_curves.png", "fig_dynamics.png")
    for split in splits:
        copy(safebranch / f"per_risk_{split}.png", f"table16_per_risk_{split}.png")
