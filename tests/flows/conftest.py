"""The tiny suite and tiny bootstrap actor the actor-side flow tests share (``test_actor_flows.py``,
``test_actor_clusters.py``, ``test_safebranch_flow.py``): built once per test process (per pytest-xdist worker),
so the three files can run on different workers."""

import pytest

from embodied_safety.config.bootstrap_actor import BootstrapActorConfig
from embodied_safety.config.household_suite import HouseholdSuiteConfig


@pytest.fixture(scope="session")
def tiny_suite(tmp_path_factory, prefect_harness):
    from flows.household_suite import household_suite

    out = tmp_path_factory.mktemp("suite")
    household_suite(HouseholdSuiteConfig(per_template=4, n_dev=1, n_test=1, behavior_coverage=False), out)
    return out / "splits"


@pytest.fixture(scope="session")
def tiny_actor(tiny_suite, tmp_path_factory):
    from flows.bootstrap_actor import bootstrap_actor

    root = tmp_path_factory.mktemp("actor")
    cfg = BootstrapActorConfig(
        patterns=1, hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, sft={"max_steps": 6, "per_device_train_batch_size": 16,
                                                "learning_rate": 1e-3, "logging_steps": 2, "max_length": 512},
        tracking={"tracking_uri": f"sqlite:///{root}/mlflow.db", "artifact_root": str(root / "artifacts")})
    metrics = bootstrap_actor(cfg, tiny_suite, root / "bootstrap_actor", root / "metrics.json")
    return root, cfg, metrics


def subset_splits(splits, dest, per_split: int):
    """A copy of the suite at ``splits`` with ``per_split`` evenly spaced tasks of every split (the task file and its
    ``bddl/<task>/`` folder, IS-Bench layout): the tiny actor's vocabulary still covers it, and a stage run over it
    costs a fraction of one over the whole tiny suite."""
    import shutil

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
