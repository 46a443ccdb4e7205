"""Branch-pair construction with the rule critics and judge, driven by a scripted unsafe actor.

Invariants on every final pair: identical prompt bytes on both sides, no feedback text in the
prompt, chosen executable from the restored state, chosen resolves the recorded condition,
rejected violates it.
"""

import pytest

from embodied_safety.actors.prompts import strip_cue
from embodied_safety.branch.collect import BranchSettings, collect_branches
from embodied_safety.branch.dataset import funnel, has_no_cue, pair_invariants, preference_row, prune
from embodied_safety.branch.judge import _holds_after, judge, restore
from embodied_safety.config.household_suite import HouseholdSuiteConfig
from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import generate_suite
from tests.helpers import GoldenUnsafeActor


@pytest.fixture(scope="module")
def collected():
    suite = generate_suite(HouseholdSuiteConfig(per_template=6, n_dev=1, n_test=1))
    tasks = [compile_task(t) for t in suite["train"]]
    actor = GoldenUnsafeActor(tasks)
    eps = collect_branches(tasks, "train", actor, 0.0, 0, BranchSettings())
    by_name = {c.name: c for c in tasks}
    raw = [b for e in eps for b in e.branches]
    verdicts = {b.branch_id: judge(by_name[b.task], b) for b in raw if b.accepted}
    return by_name, eps, raw, verdicts


def test_unsafe_episodes_are_repaired_and_failed_repairs_never_commit_the_unsafe_action(collected):
    _, eps, raw, _ = collected
    assert {b.trigger for b in raw} == {"BeforeBDDL", "TermSafety"}
    assert sum(b.accepted for b in raw) >= 0.9 * len(raw)
    for e in eps:
        failed = [b for b in e.branches if not b.accepted]
        if failed:
            assert e.end == "repair_failed"
            assert failed[-1].rejected_action not in [r.action for r in e.episode.world.history[failed[-1].anchor_step:]]
    # the scripted actor cannot re-plan (e.g. re-close the microwave it opened for a two-step repair)
    assert sum(e.episode.result().safe_success for e in eps) >= 0.9 * len(eps)


def test_invariants_on_every_final_pair(collected):
    by_name, _, raw, verdicts = collected
    final = prune([b for b in raw if b.accepted and verdicts[b.branch_id].accept])
    assert len(final) >= 0.8 * len(raw)
    assert all(pair_invariants(by_name[b.task], b) == [] for b in final)
    for b in final:
        row = preference_row(b)
        prompt = row["prompt"][0]["content"]
        assert prompt == b.prompt == strip_cue(b.prompt_with_cue)  # one prompt, byte for byte, for both sides
        assert has_no_cue(prompt) and b.feedback not in prompt
        assert row["chosen"][0]["content"] != row["rejected"][0]["content"]
        c = by_name[b.task]
        world = restore(c, b)
        ok, holds = _holds_after(c, world, b.chosen_action, b.condition_index)
        assert ok and holds, b  # chosen executes from the restored state and resolves the condition
        assert not c.condition_holds(b.condition_index, world)  # the anchor state violates it: y- would commit it


def test_plus_fb_variant_keeps_the_cue_and_nothing_else(collected):
    _, _, raw, _ = collected
    b = raw[0]
    fb = preference_row(b, with_feedback=True)["prompt"][0]["content"]
    assert "[Safety constraint]" in fb and strip_cue(fb) == b.prompt


def test_prune_keeps_one_pair_per_task_anchor_and_chosen(collected):
    _, _, raw, _ = collected
    doubled = raw + [type(b)(**{**b.to_json(), "branch_id": b.branch_id + "x", "temperature": 1.0}) for b in raw]
    assert len(prune(doubled)) == len(prune(raw))


def test_funnel_counts(collected):
    _, _, raw, verdicts = collected
    final = prune([b for b in raw if b.accepted and verdicts[b.branch_id].accept])
    f = funnel(raw, verdicts, final)
    assert f["data/pairs_extracted"] >= f["data/pairs_judged"] >= f["data/pairs_final"] == len(final)
    assert f["data/repair_acceptance"] >= 0.8 and 0 <= f["data/judge_keep_rate"] <= 1
