"""The study recipes (`studies/*.yaml`, run by `make study`, studies/shield.yaml, `make shield-ablations` through
deployments/study.py): every override applies to params.yaml as `dvc exp run -S` applies it (hydra's grammar in
struct mode: a key the file lacks needs `++`) and the result loads into every stage's config."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from flows.stages import stages
from tests.conftest import ROOT

RECIPES = ["safebranch", "shield", "shield-8x", "shield-ablations"]


def _study() -> Any:
    import sys

    sys.path.insert(0, str(ROOT / "deployments"))  # study.py imports its sibling parallel_repro
    import study

    return study


@pytest.fixture(scope="module")
def study_script():
    return _study()


def overridden_params(name: str, tmp_path: Path) -> Path:
    """params.yaml with the recipe's overrides applied by DVC's own function (what the study runs)."""
    study = _study()
    recipe = study.load_recipe(ROOT / "studies" / f"{name}.yaml")
    assert recipe["overrides"], f"{name} has no overrides"
    path = tmp_path / "params.yaml"
    shutil.copy2(ROOT / "params.yaml", path)
    study.apply(path, recipe["overrides"])
    return path


@pytest.mark.parametrize("name", RECIPES)
def test_every_recipe_override_applies_and_loads_into_the_stage_configs(name: str, tmp_path: Path) -> None:
    params = overridden_params(name, tmp_path)
    configs = {s.name: s.load_config(str(params)) for s in stages() if s.config is not None}
    assert configs


def test_a_bad_recipe_names_the_file_and_field(study_script, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\noverrides: safebranch.seeds=[0]\nresults: []\n")
    with pytest.raises(SystemExit, match=r"bad.yaml: field 'overrides' must be a list"):
        study_script.load_recipe(bad)


def _shield_plan(params: Path) -> tuple[Any, Any]:
    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.rl.runs import plan

    cfg = load_params("shield_ppo", ShieldPPOConfig, params)
    return cfg, plan(cfg, "dubins")


def test_the_shield_study_is_issue_21s_matrix_at_table_14s_budget(tmp_path: Path) -> None:
    """Dubins-VL at 1 M steps: PPO-Lagrangian, gated HJ with the rubric margin and with the ground-truth margin,
    3 seeds, and the rubric run's δ sweep."""
    from embodied_safety.shield.rl.runs import ppo_config

    cfg, todo = _shield_plan(overridden_params("shield", tmp_path))
    main = [j for j in todo.jobs if j.delta is None]
    assert {(j.run, j.seed) for j in main} == {(r, s) for r in ("ppo_lag", "gated_search", "gated_oracle_recovery")
                                               for s in (0, 1, 2)}
    assert {ppo_config(cfg, "dubins", j.run, j.seed, j.delta).total_steps for j in todo.jobs} == {1_000_000}
    swept = [j for j in todo.jobs if j.delta is not None]
    own = ppo_config(cfg, "dubins", "gated_search", 0).delta
    assert {j.run for j in swept} == {"gated_search"} and own not in {j.delta for j in swept}
    assert len({j.delta for j in swept}) >= 2 and len(swept) == 3 * len({j.delta for j in swept})


def test_the_8x_study_is_five_seeds_at_eight_times_the_demo_steps(tmp_path: Path) -> None:
    from embodied_safety.config.params import load_params
    from embodied_safety.config.shield_ppo import ShieldPPOConfig
    from embodied_safety.shield.rl.runs import ppo_config

    demo = load_params("shield_ppo", ShieldPPOConfig, ROOT / "params.yaml")
    cfg, todo = _shield_plan(overridden_params("shield-8x", tmp_path))
    assert {j.seed for j in todo.jobs} == {0, 1, 2, 3, 4}
    assert {ppo_config(cfg, "dubins", j.run, j.seed).total_steps for j in todo.jobs} == {
        8 * ppo_config(demo, "dubins", "gated", 0).total_steps}


def test_the_ablations_keep_the_cpu_budget_and_sweep_the_td_critic(tmp_path: Path) -> None:
    from embodied_safety.shield.rl.runs import ppo_config

    cfg, todo = _shield_plan(overridden_params("shield-ablations", tmp_path))
    assert ppo_config(cfg, "dubins", "gated", 0).total_steps == cfg.cpu["dubins"]["total_steps"]
    assert {j.run for j in todo.jobs if j.delta is not None} == {"gated"}


def test_the_gpu_study_script_plans_make_shield_studys_dubins_runs(tmp_path: Path) -> None:
    """benchmarks/shield_study_gpu.py (issue 21, item 6) runs the study's Dubins-VL matrix: the same jobs with the same
    PPO and critic configs as studies/shield.yaml, the same warm critics and evaluation episodes."""
    import sys

    from embodied_safety.shield.rl.runs import plan, ppo_config

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import shield_study_gpu as script

    make_cfg, make_plan = _shield_plan(overridden_params("shield", tmp_path))
    cfg = script.study_config(script.parse(["--params", str(ROOT / "params.yaml")]))
    todo = plan(cfg, "dubins")
    assert todo.jobs == make_plan.jobs and todo.critics == make_plan.critics and todo.deltas == make_plan.deltas
    assert all(ppo_config(cfg, "dubins", j.run, j.seed, j.delta) == ppo_config(make_cfg, "dubins", j.run, j.seed, j.delta)
               for j in todo.jobs)
    assert cfg.warmup == make_cfg.warmup and cfg.eval_episodes["dubins"] == make_cfg.eval_episodes["dubins"]
    assert (cfg.select_every, cfg.select_episodes) == (make_cfg.select_every, make_cfg.select_episodes) and cfg.select_every > 0
