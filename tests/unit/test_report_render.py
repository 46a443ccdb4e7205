"""The report stage's rendering on small synthetic stage outputs: every table and figure, with provenance."""

import json

from embodied_safety.evaluation.render import render
from embodied_safety.train.variants import LABELS


def _write(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def test_render_writes_every_table_and_figure_with_provenance(tmp_path):
    splits = ("test", "ood_objectshift", "ood_taskshift")
    sb = {f"eval/{v}/{s}/{k}": x for v, x in (("base", 0.1), ("safebranch", 0.5), ("sft_only", 0.4),
                                             ("safebranch_extracted", 0.3), ("safebranch_judged", 0.45))
          for s in splits for k in ("sr", "ssr", "srec")}
    bl = {f"baselines/full_critic/{s}/{k}": 0.6 for s in splits for k in ("sr", "ssr", "srec")}
    bl.update({f"baselines/full_critic/{s}/cost/module_calls": 100 for s in splits})
    funnel = {"data/pairs_extracted": 10, "data/pairs_judged": 8, "data/pairs_final": 5,
              "data/pairs_extracted/risk/Fire Hazard": 10, "data/pairs_judged/risk/Fire Hazard": 8,
              "data/pairs_final/risk/Fire Hazard": 5, "data/judge_keep_rate": 0.8, "data/repair_acceptance": 0.5,
              "efficiency/natural_pairs_per_episode": 0.01, "efficiency/branch_pairs_per_episode": 0.4,
              "efficiency/ratio": 40.0}
    curve = [{"step": 0, "sr": 0.8, "ssr": 0.0, "srec": 0.0}, {"step": 4, "sr": 0.6, "ssr": 0.5, "srec": 0.8}]
    ev = {f"{s}/{k}": 0.5 for s in splits for k in ("sr", "ssr", "srec")}
    run = {"variant": "safebranch", "seed": 0, "phases": [{"curve": curve}], "eval": ev,
           "risks": {s: {"Fire Hazard": [3, 4]} for s in splits}}
    fb = {**run, "variant": "sft_only_fb", "eval": {**ev, "test/sr": 0.1}}
    point = {**run, "variant": "sft_only", "learning_rates": {"sft": 1e-3}, "dev": {"sr": 0.7, "ssr": 0.4},
             "sweep_key": "sft", "final_reward_acc": None,
             "phases": [{"kind": "sft", "curve": curve, "metrics": {"sft_dev/best_step": 4}}]}
    sbdir = tmp_path / "models/safebranch"
    paired = {"safebranch vs sft_only": {s: {"ssr": [0.1, 0.02, 0.2, 40], "sr": [0.0, -0.1, 0.1, 40]} for s in splits}}
    _write(sbdir / "results.json", {"runs": [run, fb], "sr_floor": 0.75, "paired": paired, "base": ev, "seeds": [0],
                                    "base_risks": {s: {"Fire Hazard": [1, 4]} for s in splits}, "sweep": [point],
                                    "learning_rates": {"sft": 1e-3}, "dev_split": "dev", "eval_splits": list(splits),
                                    "scale": "demo"})
    for png in ("dev_curves.png", "per_risk_test.png"):  # the stage's figures, copied
        (sbdir / png).write_bytes(b"png")
    alfred = tmp_path / "data/alfred"
    alfred.mkdir(parents=True)
    (alfred / "table3.md").write_text("# Table 3\n\n| method | hazard |\n|---|---|\n| Base actor | 0.02 |\n")
    agentbench = tmp_path / "data/agentbench"
    _write(agentbench / "metrics.json", {})
    (agentbench / "tables.md").write_text("# SafeAgentBench results\n\n## Detailed tasks\n| planner | Rej |\n|---|---|\n"
                                          "| guard | 72.7 |\n")
    out = tmp_path / "reports"
    names = render("run123", out, sbdir, _write(tmp_path / "sb.json", sb), _write(tmp_path / "bl.json", bl),
                   _write(tmp_path / "funnel.json", funnel), alfred, _write(tmp_path / "alfred.json", {}), agentbench,
                   LABELS, boot_metrics=_write(tmp_path / "boot.json", {"ood_taskshift/plain_sr": 0.146,
                                                                          "ood_taskshift/plain_ssr": 0.0}))
    assert {"table2.md", "table14.md", "table12_funnel.md", "fig3a_efficiency.png", "fig3c_filtering.md",
            "fig3c_filtering.png", "table13_fb.md", "table15_dynamics.md", "fig_dynamics.png",
            "table16_per_risk_test.png", "table3_alfred.md", "agentbench.md", "paired.md", "table2_seeds.md",
            "table16_per_risk.md", "sweep.md"} <= set(names)
    assert (out / "fig_dynamics.png").read_bytes() == b"png"
    assert "| SFT-only | +FB | 0.100 | 0.500 | 0.500 |" in (out / "table13_fb.md").read_text()
    assert "| Fire Hazard | 1/4 (0.25) | 3/4 (0.75) |" in (out / "table16_per_risk.md").read_text()
    assert "| sft (sft_only) | 0.001 **(picked)** | 4 | 0.700 | 0.400 | - |" in (out / "sweep.md").read_text()
    assert "| SafeBranch (SFT -> BranchPO) | 0.500 |" in (out / "table2_seeds.md").read_text()
    assert "+0.100 [+0.020, +0.200] *" in (out / "paired.md").read_text()
    assert "dev SR >= 0.750" in (out / "table15_dynamics.md").read_text()
    assert "| guard | 72.7 |" in (out / "agentbench.md").read_text()
    table2 = (out / "table2.md").read_text()
    assert "Runtime full-critic" in table2 and "| 300 |" in table2  # module calls summed over the splits
    assert "SafeBranch on extracted pairs" not in table2  # the Fig. 3c variants have their own table
    # the base actor without proxy names, from the bootstrap stage's metrics, right below the base (actors/proxy.py)
    lines = table2.splitlines()
    plain = next(i for i, line in enumerate(lines) if line.startswith("| Base without proxy names"))
    assert lines[plain - 1].startswith("| Base (bootstrap actor)") and "| 0.146 | 0.000 |" in lines[plain]
    assert "boot.json" in table2
    assert "Rendered by code run123" in table2 and "sb.json" in table2 and "MLflow run `report`" in table2
    assert "| 0.450 |" in (out / "fig3c_filtering.md").read_text()
    assert all(f"[{n}]" in (out / "index.md").read_text() for n in names)
    # results at the demo budget are labelled as such in every table and the index (issue 19)
    assert all("Budget: demo budget" in (out / n).read_text() for n in [*(n for n in names if n.endswith(".md")), "index.md"])


def test_render_includes_shieldvla_part2_from_each_envs_outputs(tmp_path):
    """ShieldVLA's tables are rendered by the report stage too: the all-env tables from every env's rows (the
    renderer passed in), each env's own tables (gate check included) and its figures copied."""
    from embodied_safety.shield.rl.report import render_tables

    shield = tmp_path / "data/shield/ppo"
    for env, csc in (("dubins", 2.5), ("franka", 0.75)):
        rows = [{"env": env, "run": run, "method": run, "seed": 0, "delta": 0.08, "delta_default": True,
                 "margin": "rubric", "history": [],
                 "eval": {"in": {"sr": sr, "csc": c, "reach_rate": sr, "violation_rate": 0.1, "episodes": 4.0,
                                 "unsafe_frame_rate": 0.0, "mean_length": 50.0, "mean_return": 1.0, "frames": 200.0}}}
                for run, sr, c in (("ppo_lag", 0.25, csc), ("gated", 0.5, csc / 2))]
        _write(shield / env / "results.json", {"rows": rows})
        _write(shield / env / "gate_check.json", {})
        (shield / env / "tables.md").write_text(f"# {env}: ShieldVLA part 2 (demo matrix)\n\n## Offline gate check\n| x |\n")
        (shield / env / "curves.png").write_bytes(b"png")
    missing = tmp_path / "missing"
    out = tmp_path / "reports"
    names = render("code1", out, missing, missing / "sb.json", missing / "bl.json", missing / "f.json", missing,
                   missing / "a.json", missing, LABELS, shield, lambda rows: render_tables(rows, "all envs"))
    assert {"shield_tables.md", "shield_dubins.md", "shield_franka.md", "shield_dubins_curves.png"} <= set(names)
    assert "shield_dubins_bars.png" not in names  # only figures the stage drew are copied
    tables = (out / "shield_tables.md").read_text()
    assert tables.startswith("# ShieldVLA part 2, all environments") and "_all envs_" in tables
    assert "Dubins" in tables and "Franka" in tables and "`data" not in tables.split("_Rendered")[0]
    assert "data/shield/ppo/franka/results.json" in tables.split("_Rendered")[1]  # provenance names each input
    dubins = (out / "shield_dubins.md").read_text()
    assert "_dubins: ShieldVLA part 2 (demo matrix)_" in dubins and "## Offline gate check" in dubins
    assert "shield_tables.md" in (out / "index.md").read_text()


def test_gpu_lease_folders_render_into_one_file(tmp_path):
    """Each committed lease folder (benchmarks/gpu_runs/<date>/) becomes a section of gpu_runs.md, tables first,
    the chain's progress lines as a code block; the provenance names every file."""
    leases = tmp_path / "gpu_runs"
    one, two = leases / "2026-01-02", leases / "2026-03-04"
    one.mkdir(parents=True)
    two.mkdir()
    (one / "notes.md").write_text("# what ran\n\nthe chain alone\n")
    (one / "smollm2_table2.md").write_text("# Table 2, SmolLM2\n\n| method | SR |\n|---|---|\n| base | 0.5 |\n")
    (one / "smollm2.log").write_text("base: 10 examples\nbranches: 3 pairs\n")
    (two / "dubins_table.md").write_text("# study runs\n\n| run | SR |\n|---|---|\n| gated | 0.2 |\n")
    (two / "unlisted.txt").write_text("not rendered")
    missing = tmp_path / "missing"
    out = tmp_path / "reports"
    names = render("code1", out, missing, missing / "sb.json", missing / "bl.json", missing / "f.json", missing,
                   missing / "a.json", missing, LABELS, gpu_runs=leases)
    assert "gpu_runs.md" in names
    text = (out / "gpu_runs.md").read_text()
    body, provenance = text.split("_Rendered")
    assert body.index("## Lease 2026-01-02") < body.index("### What ran") < body.index("_Table 2, SmolLM2_") \
        < body.index("```\nbase: 10 examples") < body.index("## Lease 2026-03-04") < body.index("| gated | 0.2 |")
    assert "not rendered" not in body and "2026-03-04/unlisted.txt" in provenance
    assert render("code1", tmp_path / "r2", missing, missing / "sb.json", missing / "bl.json", missing / "f.json",
                  missing, missing / "a.json", missing, LABELS, gpu_runs=missing) == []
