"""Proxy names (actors/proxy.py): unseen object words shown to the actor as trained words with the same affordances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embodied_safety.actors.proxy import Lexicon, apply_proxies, lexicon_of, proxy_map, with_proxies


def prompt(instruction: str, objects: list[str], goals: str) -> str:
    """The lines of the compact actor prompt the proxies read (actors/prompts/actor_compact_v1.txt)."""
    return (f"Your input:\n- task_instruction: {instruction}\n- objects_list: {', '.join(objects)}\n"
            f"- task_goals: {goals}\n- history_actions: none")


# two training prompts: the burrito was packed into a jar with the fridge around, the salmon cooked on the stove
LEXICON = Lexicon.from_examples([
    (prompt("Pack the burrito into the jar.", ["jar.n.01_1", "burrito.n.01_1", "electric_refrigerator.n.01_1"],
            "(inside ?burrito.n.01_1 ?jar.n.01_1)"), "PLACE_INSIDE ( burrito .n.01_1 , jar .n.01_1 )"),
    (prompt("Cook the salmon.", ["stove.n.01_1", "salmon.n.03_1"], "(cooked ?salmon.n.03_1)"),
     "WAIT_FOR_COOKED ( salmon .n.03_1 )"),
    (prompt("Cook the salmon.", ["stove.n.01_1", "salmon.n.03_1"], "(cooked ?salmon.n.03_1)"),
     "TOGGLE_ON ( stove .n.01_1 )"),
])


def test_the_lexicon_counts_written_categories_and_the_objects_beside_them() -> None:
    assert LEXICON.counts == {"burrito.n.01": 1, "jar.n.01": 1, "salmon.n.03": 1, "stove.n.01": 1}
    assert LEXICON.cooc["burrito.n.01"] == {"jar.n.01": 1, "electric_refrigerator.n.01": 1}
    assert lexicon_of({"proxy_names": json.loads(json.dumps(LEXICON.to_json()))}) == LEXICON
    assert lexicon_of({}) is None


def test_an_unseen_goal_object_gets_the_same_ability_word_that_played_its_role() -> None:
    p = prompt("Pack the leftover apple pie into the jar.",
               ["jar.n.01_1", "apple_pie.n.01_1", "electric_refrigerator.n.01_1"], "(inside ?apple_pie.n.01_1 ?jar.n.01_1)")
    # burrito and salmon are both cookable + freezable; the burrito was written beside the jar and the fridge
    assert proxy_map(p, LEXICON) == {"apple_pie.n.01": "burrito.n.01"}
    shown = apply_proxies(p, proxy_map(p, LEXICON))
    assert "apple" not in shown and "Pack the leftover burrito into the jar." in shown
    assert "burrito.n.01_1" in shown and "(inside ?burrito.n.01_1 ?jar.n.01_1)" in shown


def test_no_proxy_for_distractors_known_words_words_in_the_scene_or_without_a_same_ability_word() -> None:
    p = prompt("Pack the lasagna into the jar.",
               ["jar.n.01_1", "lasagna.n.01_1", "apple_pie.n.01_1", "burrito.n.01_1", "steel_wool.n.01_1"],
               "(inside ?lasagna.n.01_1 ?jar.n.01_1) (not (dusty ?steel_wool.n.01_1))")
    # the apple pie is a distractor (not in the goals or the instruction); the burrito is already in the scene, so
    # the lasagna gets the salmon; steel wool has no trained word with its abilities
    assert proxy_map(p, LEXICON) == {"lasagna.n.01": "salmon.n.03"}
    two = prompt("Pack the lasagna and the apple pie.", ["jar.n.01_1", "lasagna.n.01_1", "apple_pie.n.01_1"],
                 "(inside ?lasagna.n.01_1 ?jar.n.01_1) (inside ?apple_pie.n.01_1 ?jar.n.01_1)")
    assert sorted(proxy_map(two, LEXICON).values()) == ["burrito.n.01", "salmon.n.03"]  # never one word for two


def test_answers_are_mapped_back_whatever_spacing_the_decoder_used() -> None:
    back = {"salmon.n.03": "lasagna.n.01"}
    assert apply_proxies("PLACE_INSIDE ( salmon .n.03_1 , jar .n.01_1 )", back) == \
        "PLACE_INSIDE ( lasagna.n.01_1 , jar .n.01_1 )"
    assert apply_proxies('{"action": "CUT(salmon.n.03_2, knife.n.01_1)"}', back) == \
        '{"action": "CUT(lasagna.n.01_2, knife.n.01_1)"}'


def test_with_proxies_shows_the_proxy_and_returns_the_real_name() -> None:
    seen: list[str] = []

    def echo_first_object(prompts: list[str], temperature: float, seed: object) -> list[str]:
        seen.extend(prompts)
        return [f"PLACE_INSIDE ( {p.split('objects_list: ')[1].splitlines()[0].split(', ')[1]} , jar.n.01_1 )" for p in prompts]

    p = prompt("Pack the apple pie into the jar.", ["jar.n.01_1", "apple_pie.n.01_1"], "(inside ?apple_pie.n.01_1 ?jar.n.01_1)")
    out = with_proxies(echo_first_object, LEXICON, [p], 0.0, 0)
    assert "burrito.n.01_1" in seen[0] and "apple" not in seen[0]
    assert out == ["PLACE_INSIDE ( apple_pie.n.01_1 , jar.n.01_1 )"]


def test_a_saved_actor_applies_its_lexicon_unless_told_not_to(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from embodied_safety.actors.bootstrap import ModelShape, build_model, save_actor_dir, train_tokenizer
    from embodied_safety.actors.hf import HFActor

    p = prompt("Pack the apple pie into the jar.", ["jar.n.01_1", "apple_pie.n.01_1"], "(inside ?apple_pie.n.01_1 ?jar.n.01_1)")
    tokenizer = train_tokenizer([p, apply_proxies(p, {"apple_pie.n.01": "burrito.n.01"}), "PLACE_INSIDE ( , )"])
    shape = ModelShape(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=16)
    model_dir = save_actor_dir(build_model(tokenizer, shape, seed=0), tokenizer, tmp_path / "a", 12, LEXICON)
    assert json.loads((model_dir / "embodied_safety.json").read_text())["proxy_names"]["counts"] == LEXICON.counts
    assert HFActor(model_dir).lexicon == LEXICON and HFActor(model_dir, proxy_names=False).lexicon is None
    # decoding copies prompt tokens only, and the prompt it sees holds "burrito": the answer never does
    outs = HFActor(model_dir).generate([p] * 8, temperature=1.0, seed=list(range(8)))
    assert not any("burrito" in o for o in outs)


def test_renamed_copies_never_write_an_excluded_category_and_need_the_exclusion() -> None:
    import random

    from embodied_safety.actors.bootstrap_data import DataSettings, Example, bootstrap_examples, rename
    from embodied_safety.envs.household.suite.catalog import CATALOG

    movable = sorted(c for c, ab in CATALOG.items() if "fixed" not in ab and "substance" not in ab)
    exclude = frozenset(movable[5:])  # leave five categories (besides the burrito itself) to draw from
    allowed = {c.split(".")[0] for c in movable[:5]} - {"burrito"}
    ex = Example("Pack the burrito: burrito.n.01_1", "PLACE_INSIDE ( burrito .n.01_1 )", "plan", "t")
    for seed in range(20):
        out = rename(ex, ["burrito"], random.Random(seed), exclude)
        assert out is not None and out.prompt.split(": ")[0].removeprefix("Pack the ") in allowed
    with pytest.raises(ValueError, match="rename_exclude"):
        bootstrap_examples([], DataSettings(renamed_fraction=0.5))
