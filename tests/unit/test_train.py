"""Every training variant trains a tiny actor for a few steps and changes every trainable parameter
(TRL's own habit), with full fine-tuning and with LoRA; dev-split selection keeps the best state."""

import pytest

pytest.importorskip("trl")

from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer  # noqa: E402
from embodied_safety.train.common import Selector, load_trainable  # noqa: E402
from embodied_safety.train.safebranch import train_branchpo, train_sft  # noqa: E402
from embodied_safety.train.trajectory_dpo import train_trajectory_dpo  # noqa: E402
from embodied_safety.train.variants import RECIPES, datasets  # noqa: E402

PROMPTS = [f"Your input: - objects_list: stove.n.01_1, sink.n.01_1 - history_actions: {i}. WAIT()" for i in range(8)]
SAFE, UNSAFE = "TOGGLE_OFF(stove.n.01_1)", "DONE()"
LORA = {"r": 4, "lora_alpha": 8, "lora_dropout": 0.0}
STEPS = {"max_steps": 3, "per_device_train_batch_size": 4, "learning_rate": 1e-2, "max_length": 128, "logging_steps": 1}


def tiny_actor(path):
    tok = train_tokenizer(PROMPTS + ["TOGGLE_OFF(stove.n.01_1) TOGGLE_ON(sink.n.01_1) DONE()"])
    shape = ModelShape(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=32)
    return save_actor_dir(build_model(tok, shape, seed=0), tok, path, 8)


def params(path):
    import torch
    from transformers import AutoModelForCausalLM

    return {k: v.clone() for k, v in AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).named_parameters()}


def unchanged(a, b):
    return [k for k in a if (a[k] == b[k]).all()]


SFT_ROWS = [{"messages": [{"role": "user", "content": p}, {"role": "assistant", "content": SAFE}]} for p in PROMPTS]
PAIRS = [{"prompt": [{"role": "user", "content": p}], "chosen": [{"role": "assistant", "content": SAFE}],
          "rejected": [{"role": "assistant", "content": UNSAFE}]} for p in PROMPTS]
TRAJ = [{"task": "t", "chosen": [(p, SAFE), (PROMPTS[(i + 1) % 8], UNSAFE)], "rejected": [(p, UNSAFE)]}
        for i, p in enumerate(PROMPTS)]
DPO = {**STEPS, "beta": 0.1}


@pytest.mark.parametrize("kind", ["sft", "sft_bucketed", "branchpo", "trajectory_dpo"])
def test_each_phase_changes_every_parameter(tmp_path, kind):
    base = tiny_actor(tmp_path / "base")
    train, data, cfg = {"sft": (train_sft, SFT_ROWS, STEPS), "branchpo": (train_branchpo, PAIRS, DPO),
                        "sft_bucketed": (train_sft, SFT_ROWS, {**STEPS, "length_bucket": 2}),  # trl_cpu.BucketedSampler
                        "trajectory_dpo": (train_trajectory_dpo, TRAJ, DPO)}[kind]
    result = train(base, data, tmp_path / "out", cfg, seed=0)
    assert not unchanged(params(base), params(tmp_path / "out")), unchanged(params(base), params(tmp_path / "out"))
    assert result.metrics[f"{'sft' if kind.startswith('sft') else 'dpo'}/steps"] == 3
    assert (tmp_path / "out" / "embodied_safety.json").is_file()  # still a usable actor dir


@pytest.mark.parametrize("kind", ["sft", "branchpo", "trajectory_dpo"])
def test_lora_trains_every_adapter_weight_and_saves_a_merged_actor(tmp_path, kind, monkeypatch):
    import embodied_safety.train.common as common

    base = tiny_actor(tmp_path / "base")
    before: dict = {}
    seen: dict = {}
    real_load, real_save = common.load_trainable, common.save_actor

    def load(start, peft):  # record the adapter's initial trainable weights
        model, tok = real_load(start, peft)
        before.update({k: v.detach().clone() for k, v in model.named_parameters() if v.requires_grad})
        return model, tok

    def save(model, tok, source, out):
        seen.update({k: v.detach().clone() for k, v in model.named_parameters() if v.requires_grad})
        real_save(model, tok, source, out)

    module = {"sft": "safebranch", "branchpo": "safebranch", "trajectory_dpo": "trajectory_dpo"}[kind]
    monkeypatch.setattr(f"embodied_safety.train.{module}.load_trainable", load)
    monkeypatch.setattr("embodied_safety.train.common.save_actor", save)
    train, data, cfg = {"sft": (train_sft, SFT_ROWS, STEPS), "branchpo": (train_branchpo, PAIRS, DPO),
                        "trajectory_dpo": (train_trajectory_dpo, TRAJ, DPO)}[kind]
    train(base, data, tmp_path / "out", cfg, seed=0, peft=LORA)
    assert before and all("lora_" in k for k in before)
    assert not unchanged(before, seen), unchanged(before, seen)
    linear = {k: v for k, v in params(base).items() if "proj" in k}
    assert linear and not unchanged(linear, params(tmp_path / "out"))  # every adapted layer merged into plain weights
    assert not any("lora" in k for k in params(tmp_path / "out"))


def test_selector_keeps_the_best_dev_state_by_ssr_then_sr(tmp_path):
    import torch

    base = tiny_actor(tmp_path / "base")
    model, _ = load_trainable(base, None)
    points = iter([{"sr": 0.9, "ssr": 0.0}, {"sr": 0.5, "ssr": 0.3}, {"sr": 0.6, "ssr": 0.3}, {"sr": 0.8, "ssr": 0.2}])
    sel = Selector(lambda actor: next(points), every=2, source=base)
    weight = next(model.parameters())
    for step in range(0, 7):
        with torch.no_grad():
            weight.fill_(float(step))
        sel.step(model, step)
    assert [p["step"] for p in sel.curve] == [0, 2, 4, 6]
    assert sel.best["step"] == 4 and sel.summary()["dev/best_sr"] == 0.6  # SSR tie at 0.3 broken by SR
    sel.restore_best(model)
    assert float(next(model.parameters()).flatten()[0]) == 4.0


def test_every_variant_names_data_that_exists():
    pair = [{"prompt": [], "chosen": [], "pair_id": "p", "task": "t"}]
    sets = datasets(pair, pair, [], [], [], [], pair, pair)
    assert all(p.data in sets for phases in RECIPES.values() for p in phases)
    assert sets["sft_fb"] == [{"messages": [], "pair_id": "p", "task": "t"}] and sets["pairs_judged"] == pair


def test_branchpo_only_uses_its_own_sweep_pick_and_everyone_else_the_phase_pick():
    from embodied_safety.train.variants import lrs_for

    picks = {"sft": 3e-3, "branchpo": 1e-5, "branchpo_only": 1e-4, "trajectory_dpo": 1e-4}
    assert lrs_for("safebranch", picks)["branchpo"] == 1e-5
    assert lrs_for("branchpo_only", picks)["branchpo"] == lrs_for("branchpo_only_fb", picks)["branchpo"] == 1e-4
    assert lrs_for("branchpo_only", {k: v for k, v in picks.items() if k != "branchpo_only"})["branchpo"] == 1e-5


def test_selector_with_a_floor_maximises_ssr_among_checkpoints_that_keep_sr(tmp_path):
    from embodied_safety.evaluation.selection import select

    base = tiny_actor(tmp_path / "base")
    model, _ = load_trainable(base, None)
    points = iter([{"sr": 0.9, "ssr": 0.0}, {"sr": 0.5, "ssr": 0.6}, {"sr": 0.8, "ssr": 0.3}, {"sr": 0.85, "ssr": 0.2}])
    sel = Selector(lambda actor: next(points), every=1, source=base, sr_floor=0.8)
    for step in range(4):
        sel.step(model, step)
    assert sel.best["step"] == 2 and sel.summary()["dev/below_floor"] == 0.0  # SSR 0.6 loses SR: not eligible
    curve = [{"sr": 0.5, "ssr": 0.6}, {"sr": 0.7, "ssr": 0.1}, {"sr": 0.6, "ssr": 0.5}]
    assert select(curve, 0.8) == ({"sr": 0.7, "ssr": 0.1}, True)  # nothing qualifies: max SR, flagged
    assert select(curve, None) == ({"sr": 0.5, "ssr": 0.6}, False) and select([], 0.8) == (None, False)


def test_promotion_without_a_champion_must_beat_the_base_actor():
    from embodied_safety.train.promotion import decide

    base = {"ssr": 0.05, "sr": 0.80}
    assert not decide({"ssr": 0.5, "sr": 0.7}, None, 0.1)[0]  # no base metrics: nothing to beat, not promoted
    ok, reason = decide({"ssr": 0.5, "sr": 0.35}, None, 0.1, base, 0.05)
    assert not ok and "base actor" in reason  # dev SR 0.45 below the base's
    assert not decide({"ssr": 0.05, "sr": 0.9}, None, 0.1, base, 0.05)[0]  # no SSR gain
    assert decide({"ssr": 0.5, "sr": 0.76}, None, 0.1, base, 0.05)[0]
    assert not decide({"ssr": 0.6, "sr": 0.6}, {"ssr": 0.5, "sr": 0.76}, 0.1, base, 0.05)[0]  # the champion rule
