"""The trie decoder: only valid calls over the prompt's objects, one call, then end of sequence."""

import pytest

from embodied_safety.actors.trie import TrieConstraint, build_trie, prompt_objects, valid_calls

PROMPT = "Your input:\n- task_instruction: x\n- objects_list: stove.n.01_1, sink.n.01_1\n- task_goals: y"


def test_valid_calls_cover_every_primitive_over_the_prompt_objects():
    objects = prompt_objects(PROMPT)
    assert objects == ("stove.n.01_1", "sink.n.01_1")
    calls = valid_calls(objects)
    assert {"DONE()", "TOGGLE_OFF(stove.n.01_1)", "SOAK_UNDER(sink.n.01_1, stove.n.01_1)"} <= set(calls)
    assert "SOAK_UNDER(sink.n.01_1, sink.n.01_1)" not in calls and len(calls) == len(set(calls))


def test_constraint_follows_the_trie_then_ends():
    torch = pytest.importorskip("torch")
    trie = build_trie([[5, 6], [5, 7, 8], [9]])
    c = TrieConstraint([trie, trie], prompt_len=2, eos_id=0)
    assert sorted(c.allowed(0, [])) == [5, 9] and sorted(c.allowed(0, [5])) == [6, 7]
    assert c.allowed(0, [5, 6]) == [0] and c.allowed(0, [5, 6, 0]) == [0] and c.allowed(0, [3]) == [0]
    scores = torch.zeros(2, 10)
    out = c(torch.tensor([[1, 1, 5], [1, 1, 9]]), scores)
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [6, 7]
    assert torch.isfinite(out[1]).nonzero().flatten().tolist() == [0]


def test_an_hf_actor_with_the_trie_profile_emits_only_valid_calls(tmp_path):
    pytest.importorskip("transformers")
    from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer
    from embodied_safety.actors.hf import PROFILE_FILE, HFActor
    from embodied_safety.actors.parsing import parse_output
    from embodied_safety.io import read_json, write_json

    tok = train_tokenizer([PROMPT, *valid_calls(prompt_objects(PROMPT))])  # a vocabulary that covers every call
    shape = ModelShape(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=16)
    path = save_actor_dir(build_model(tok, shape, seed=0), tok, tmp_path / "a", 24)
    profile = {k: v for k, v in read_json(path / PROFILE_FILE).items() if k != "grammar_tokens"}
    write_json(path / PROFILE_FILE, {**profile, "decoder": "trie"})
    actor = HFActor(path, max_new_tokens=24)
    calls = set(valid_calls(prompt_objects(PROMPT)))
    for out in actor.generate([PROMPT] * 4, temperature=1.0, seed=3):
        assert parse_output(out).action in calls, out
