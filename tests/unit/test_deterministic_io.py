"""Files inside output folders carry no wall-clock measurements (their bytes decide DVC's hashes)."""

from embodied_safety.io import without_run_facts


def test_without_run_facts_drops_wall_clock_keys_recursively():
    rows = [{"losses/loss": 1.0, "charts/train_runtime": 3.2, "charts/train_samples_per_second": 9.0, "step": 3},
            {"epoch": 1, "seconds": 0.4, "nested": {"train/seconds": 2.0, "elapsed": 1.0, "sr": 0.5}}]
    assert without_run_facts(rows) == [{"losses/loss": 1.0, "step": 3}, {"epoch": 1, "nested": {"sr": 0.5}}]
    assert without_run_facts({"final": {"total_seconds": 5.0, "val_loss": 0.1}}) == {"final": {"val_loss": 0.1}}


def test_without_run_facts_drops_registry_versions_but_keeps_decisions():
    """A model version counts up with every run in a workspace; a fresh clone starts at 1 (issue 19)."""
    metrics = {"registry/version": 3.0, "eval/sr": 0.6, "promoted": 1.0,
               "runs": [{"variant": "sft", "version": "5", "critic_version": "2", "dev": {"dev/sr": 0.7}}]}
    assert without_run_facts(metrics) == {"eval/sr": 0.6, "promoted": 1.0, "runs": [{"variant": "sft", "dev": {"dev/sr": 0.7}}]}


def test_the_stage_envelope_rewrites_its_metrics_file_without_run_facts(tmp_path):
    import json

    from flows._stage import strip_run_facts

    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"train/seconds": 731.2, "registry/version": 4.0, "eval/sr": 0.65}))
    strip_run_facts(path)
    assert json.loads(path.read_text()) == {"eval/sr": 0.65}
    before = path.stat().st_mtime_ns
    strip_run_facts(path)  # nothing to drop: the file is left alone
    assert path.stat().st_mtime_ns == before
