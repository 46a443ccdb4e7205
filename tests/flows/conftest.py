"""The tiny suite and tiny bootstrap actor the actor-side flow tests share (``test_actor_flows.py``,
``test_actor_clusters.py``, ``test_safebranch_flow.py``): built once per test session. Under pytest-xdist the
first worker that needs one builds it under a file lock in the workers' common temporary folder and the others
reuse it (the tiny actor costs ~40 s of training), so the three files can still run on different workers."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from embodied_safety.config.bootstrap_actor import BootstrapActorConfig
from embodied_safety.config.household_suite import HouseholdSuiteConfig


def built_once(tmp_path_factory, worker_id: str, name: str, build: Callable[[Path], None]) -> Path:
    """A folder ``build(folder)`` filled once per session; with xdist, once for all workers (``.done`` marks a
    finished build, so a build a crashed worker left half-way is redone)."""
    if worker_id == "master":  # no xdist
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    folder = tmp_path_factory.getbasetemp().parent / name
    with FileLock(f"{folder}.lock"):
        if not (folder / ".done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".done").touch()
    return folder


@pytest.fixture(scope="session")
def tiny_suite(tmp_path_factory, worker_id, prefect_harness):
    from flows.household_suite import household_suite

    def build(out: Path) -> None:
        household_suite(HouseholdSuiteConfig(per_template=4, n_dev=1, n_test=1, behavior_coverage=False), out)

    return built_once(tmp_path_factory, worker_id, "suite", build) / "splits"


@pytest.fixture(scope="session")
def tiny_actor(tiny_suite, tmp_path_factory, worker_id):
    def config(root: Path) -> BootstrapActorConfig:
        return BootstrapActorConfig(
            patterns=1, proxy_names=True, ood_splits=("ood_taskshift",), hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
            num_key_value_heads=1, head_dim=32, sft={"max_steps": 6, "per_device_train_batch_size": 16,
                                                    "learning_rate": 1e-3, "logging_steps": 2, "max_length": 512},
            tracking={"tracking_uri": f"sqlite:///{root}/mlflow.db", "artifact_root": str(root / "artifacts")})

    def build(root: Path) -> None:
        from flows.bootstrap_actor import bootstrap_actor

        returned = bootstrap_actor(config(root), tiny_suite, root / "bootstrap_actor", root / "metrics.json")
        (root / "returned.json").write_text(json.dumps(returned))  # what the flow returned, beside what it wrote

    root = built_once(tmp_path_factory, worker_id, "actor", build)
    return root, config(root), json.loads((root / "returned.json").read_text())


def subset_splits(splits, dest, per_split: int):
    """A copy of the suite at ``splits`` with ``per_split`` evenly spaced tasks of every split (the task file and its
    ``bddl/<task>/`` folder, IS-Bench layout): the tiny actor's vocabulary still covers it, and a stage run over it
    costs a fraction of one over the whole tiny suite."""
    for split in sorted(p for p in splits.iterdir() if (p / "tasks").is_dir()):
        names = sorted(p.stem for p in (split / "tasks").glob("*.json"))
        keep = names if len(names) <= per_split else [names[i * len(names) // per_split] for i in range(per_split)]
        (dest / split.name / "tasks").mkdir(parents=True)
        for name in keep:
            shutil.copy2(split / "tasks" / f"{name}.json", dest / split.name / "tasks" / f"{name}.json")
            shutil.copytree(split / "bddl" / name, dest / split.name / "bddl" / name)
    return dest


@pytest.fixture(scope="session")
def small_suite(tiny_suite, tmp_path_factory):
    """Twelve tasks per split of the tiny suite (the tiny actor was trained on the whole tiny train split): for the
    end-to-end tests whose subject is the orchestration (clusters, kills, retries, the safebranch stage's
    bookkeeping), not the numbers."""
    return subset_splits(tiny_suite, tmp_path_factory.mktemp("small_suite") / "splits", 12)
