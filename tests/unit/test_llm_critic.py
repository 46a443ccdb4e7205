"""LLM critic backend: schema validation, retries, failure records, the cache (JSON extraction and the ask
loop itself: test_llm_ask.py)."""

import pytest

from embodied_safety.critics.llm import (
    LLMCritic,
    LLMCriticError,
    validate_before,
    validate_judge,
    validate_term,
)
from embodied_safety.envs.household.env import compile_task
from tests.helpers import fan_task

GOOD = '{"mode":"INSERT","issue":"fan is on","feedback":"Do TOGGLE_OFF(electric_fan.n.01_1) now.","object_analysis":"fan"}'


class Scripted:
    """A text generator that answers from a list (stands in for a model; the wire path is tested
    against a real server in tests/flows/test_openai_backend.py)."""

    prompt_style = "full"

    def __init__(self, answers):
        self.answers, self.prompts = list(answers), []

    def generate(self, prompts, temperature=0.0, seed=0):
        self.prompts += prompts
        return [self.answers.pop(0) for _ in prompts]


def test_validators():
    validate_before({"mode": "REPLACE", "issue": "", "feedback": "", "object_analysis": ""})
    with pytest.raises(ValueError, match="mode"):
        validate_before({"mode": "DELETE", "issue": "", "feedback": "", "object_analysis": ""})
    term = {"issue": "x", "analysis": {"kind": "wrong_action_choice", "step_index": 1}, "repair_step": 3, "rule": "r"}
    validate_term(term, length=4)
    with pytest.raises(ValueError, match="outside"):
        validate_term({**term, "repair_step": 9}, length=4)
    with pytest.raises(ValueError, match="accept"):
        validate_judge({"justified": True, "executable": True, "resolves": True, "accept": "yes"})


def test_invalid_output_is_retried_then_accepted_and_cached(tmp_path):
    c = compile_task(fan_task())
    world = c.new_world()
    gen = Scripted(["I think the fan is dangerous.", GOOD])
    critic = LLMCritic(gen, "scripted", cache_dir=tmp_path, retries=2)
    v = critic.prospective(c, world, "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)", 0)
    assert v.mode == "INSERT" and "TOGGLE_OFF" in v.feedback and critic.calls == 2
    assert "(not (toggled_on ?electric_fan.n.01_1))" in gen.prompts[0] and "Respond ONLY in JSON" in gen.prompts[0]
    again = critic.prospective(c, world, "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)", 0)
    assert again == v and critic.calls == 2  # served from the content-hash cache


def test_output_that_stays_invalid_is_a_recorded_failure_and_not_cached(tmp_path):
    c = compile_task(fan_task())
    critic = LLMCritic(Scripted(["nope"] * 3 + [GOOD]), "scripted", cache_dir=tmp_path, retries=2)
    with pytest.raises(LLMCriticError, match="after 3 attempts: no JSON object in 'nope'"):
        critic.prospective(c, c.new_world(), "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)", 0)
    assert critic.failures == 1 and critic.calls == 3 and list(tmp_path.iterdir()) == []
    v = critic.prospective(c, c.new_world(), "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)", 0)
    assert v.mode == "INSERT" and critic.calls == 4  # a failure is asked again next time


def test_collection_with_a_failing_llm_critic_never_commits_the_unsafe_action():
    from embodied_safety.branch.collect import BranchSettings, collect_branches
    from tests.helpers import GoldenUnsafeActor

    c = compile_task(fan_task())
    critic = LLMCritic(Scripted(["garbage"] * 10), "scripted", retries=1)
    [ep] = collect_branches([c], "train", GoldenUnsafeActor([c]), 0.0, 0, BranchSettings(), critic=critic)
    assert ep.end == "critic_failed" and ep.branches[0].failure.startswith("critic:")
    assert "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)" not in [r.action for r in ep.episode.world.history]
