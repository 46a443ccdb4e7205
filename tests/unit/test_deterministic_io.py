"""Files inside output folders carry no wall-clock measurements (their bytes decide DVC's hashes)."""

from embodied_safety.io import without_timings


def test_without_timings_drops_wall_clock_keys_recursively():
    rows = [{"losses/loss": 1.0, "charts/train_runtime": 3.2, "charts/train_samples_per_second": 9.0, "step": 3},
            {"epoch": 1, "seconds": 0.4, "nested": {"train/seconds": 2.0, "elapsed": 1.0, "sr": 0.5}}]
    assert without_timings(rows) == [{"losses/loss": 1.0, "step": 3}, {"epoch": 1, "nested": {"sr": 0.5}}]
    assert without_timings({"final": {"total_seconds": 5.0, "val_loss": 0.1}}) == {"final": {"val_loss": 0.1}}
