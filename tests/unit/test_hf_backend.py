"""The hf backend on a tiny random actor: batching is transparent, constrained decoding only copies."""

import json

import pytest

pytest.importorskip("transformers")

from embodied_safety.actors.bootstrap import (  # noqa: E402
    ModelShape,
    build_model,
    grammar_tokens,
    save_actor_dir,
    train_tokenizer,
)
from embodied_safety.actors.hf import PROFILE_FILE, HFActor  # noqa: E402

TEXTS = ["Your input: - objects_list: stove.n.01_1, sink.n.01_1, apple.n.01_1, pear.n.01_1, drawer.n.01_1",
         "TOGGLE_OFF(stove.n.01_1) PLACE_ON_TOP(apple.n.01_1, drawer.n.01_1) OPEN(drawer.n.01_1) DONE()",
         "melon.n.01_1 lemon.n.01_1 fridge.n.01_1 plate.n.04_1 knife.n.01_1 WIPE CUT WAIT"]
PROMPTS = ["Your input: - objects_list: stove.n.01_1, sink.n.01_1", "Your input: - objects_list: apple.n.01_1",
           "Your input: - objects_list: pear.n.01_1, drawer.n.01_1, stove.n.01_1"]


@pytest.fixture(scope="module")
def actor_dir(tmp_path_factory):
    tok = train_tokenizer(TEXTS)
    shape = ModelShape(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=32)
    return save_actor_dir(build_model(tok, shape, seed=0), tok, tmp_path_factory.mktemp("a") / "actor", 12)


def test_batched_and_single_greedy_outputs_match(actor_dir):
    single, batched = HFActor(actor_dir, batch_size=1), HFActor(actor_dir, batch_size=16)
    assert single.generate(PROMPTS) == batched.generate(PROMPTS)
    assert batched.generate(PROMPTS, 0.0) == batched.generate(PROMPTS, 0.0)
    assert batched.generate(PROMPTS, 1.0, seed=3) == batched.generate(PROMPTS, 1.0, seed=3)


def test_constrained_decoding_only_emits_grammar_or_prompt_tokens(actor_dir):
    profile = json.loads((actor_dir / PROFILE_FILE).read_text())
    assert set(profile["grammar_tokens"]) >= {"TOGGLE_OFF", "(", ")", ",", ".n.01_1"}
    actor = HFActor(actor_dir)
    tok = actor.tokenizer
    grammar = set(grammar_tokens(tok))
    for temperature in (0.0, 1.0):
        for prompt, out in zip(PROMPTS, actor.generate(PROMPTS, temperature, seed=1), strict=True):
            allowed = grammar | set(tok.tokenize(prompt))
            assert set(tok.tokenize(out)) <= allowed, (prompt, out)


def test_per_prompt_seeds_sample_each_prompt_independently_of_its_batch(actor_dir):
    batched, single = HFActor(actor_dir, batch_size=16), HFActor(actor_dir, batch_size=1)
    seeds = [11, 22, 33]
    together = batched.generate(PROMPTS, 1.0, seed=seeds)
    assert together == single.generate(PROMPTS, 1.0, seed=seeds)
    assert [batched.generate([p], 1.0, seed=[s])[0] for p, s in zip(PROMPTS, seeds, strict=True)] == together
    assert batched.generate(PROMPTS[::-1], 1.0, seed=seeds[::-1]) == together[::-1]
    draws = {batched.generate(PROMPTS[:1], 1.0, seed=[s])[0] for s in range(12)}
    assert len(draws) > 1  # it samples (T = 1), it is not greedy
    assert batched.generate(PROMPTS, 0.0, seed=seeds) == batched.generate(PROMPTS)  # T = 0: greedy either way
