"""SFT and BranchPO train a tiny actor for a few steps and change every trainable parameter (TRL's habit)."""

import pytest

pytest.importorskip("trl")

from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer  # noqa: E402
from embodied_safety.train.safebranch import train_branchpo, train_sft  # noqa: E402

PROMPTS = [f"Your input: - objects_list: stove.n.01_1, sink.n.01_1 - history_actions: {i}. WAIT()" for i in range(8)]


def tiny_actor(path):
    tok = train_tokenizer(PROMPTS + ["TOGGLE_OFF(stove.n.01_1) TOGGLE_ON(sink.n.01_1) DONE()"])
    shape = ModelShape(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=32)
    return save_actor_dir(build_model(tok, shape, seed=0), tok, path, 8)


def params(path):
    import torch
    from transformers import AutoModelForCausalLM

    return {k: v.clone() for k, v in AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).named_parameters()}


def test_sft_then_branchpo_change_every_parameter(tmp_path):
    base = tiny_actor(tmp_path / "base")
    rows = [{"messages": [{"role": "user", "content": p}, {"role": "assistant", "content": "TOGGLE_OFF(stove.n.01_1)"}]}
            for p in PROMPTS]
    train_sft(base, rows, tmp_path / "sft", {"max_steps": 3, "per_device_train_batch_size": 4, "learning_rate": 1e-2,
                                              "max_length": 128, "logging_steps": 1}, seed=0)
    before, after_sft = params(base), params(tmp_path / "sft")
    assert all(not (before[k] == after_sft[k]).all() for k in before), [k for k in before if (before[k] == after_sft[k]).all()]
    pairs = [{"prompt": [{"role": "user", "content": p}], "chosen": [{"role": "assistant", "content": "TOGGLE_OFF(stove.n.01_1)"}],
              "rejected": [{"role": "assistant", "content": "DONE()"}]} for p in PROMPTS]
    m = train_branchpo(tmp_path / "sft", pairs, tmp_path / "dpo", {"max_steps": 3, "per_device_train_batch_size": 4,
                                                                   "learning_rate": 1e-2, "beta": 0.1, "max_length": 128,
                                                                   "logging_steps": 1}, seed=0)
    after_dpo = params(tmp_path / "dpo")
    assert all(not (after_sft[k] == after_dpo[k]).all() for k in after_sft)
    assert m["dpo/pairs"] == len(pairs)
    assert (tmp_path / "dpo" / "embodied_safety.json").is_file()  # still a usable actor dir
