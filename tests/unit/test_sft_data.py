"""Issue 20's training data: golden-trajectory replay (D.5), after-repair and contrast pairs, the
SFT mixture option and the no-branch-data control."""

from embodied_safety.actors.context import build_context
from embodied_safety.branch.golden import after_repair_pairs, contrast_pairs, extra_pairs, golden_replay
from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import instantiate, template_combos
from embodied_safety.envs.household.suite.templates import TEMPLATES
from embodied_safety.records import RawBranch
from embodied_safety.train.variants import RECIPES, datasets

LAUNDRY = next(t for t in TEMPLATES if t.name == "wash_laundry")
COMBO = template_combos(LAUNDRY, 0)[0]
PLAIN = compile_task(instantiate(LAUNDRY, COMBO, False, "train"))
CONTRAST = compile_task(instantiate(LAUNDRY, COMBO, True, "train"))


def _text(row, side):
    return row[side][0]["content"]


def test_golden_replay_is_every_plan_step_in_the_actors_context():
    rows = golden_replay([PLAIN, CONTRAST])
    plan = [s.action for s in PLAIN.task.example_planning]
    mine = [r for r in rows if r["task"] == PLAIN.name]
    assert [r["messages"][1]["content"] for r in mine] == plan and all(r["kind"] == "golden" for r in rows)
    assert mine[0]["messages"][0]["content"] == build_context(PLAIN, PLAIN.new_world()).prompt("compact")
    assert len(rows) == len(plan) + len(CONTRAST.task.example_planning)


def test_contrast_pairs_reject_the_safety_step_the_contrast_makes_wrong():
    washer = next(o for o in PLAIN.task.object_list if o.startswith("washer"))
    pairs = contrast_pairs([PLAIN, CONTRAST])
    assert pairs and all(p["task"] == CONTRAST.name and p["kind"] == "contrast" for p in pairs)
    assert (_text(pairs[0], "chosen"), _text(pairs[0], "rejected")) == ("DONE()", f"CLOSE({washer})")
    world = CONTRAST.new_world()
    for s in CONTRAST.task.example_planning[:-1]:
        world.step(s.action)
    assert pairs[0]["prompt"][0]["content"] == build_context(CONTRAST, world).prompt("compact")


def _branch(task, k, rejected, chosen):
    plan = [s.action for s in task.task.example_planning]
    return RawBranch(f"b{k}", task.name, "train", 0.0, "BeforeBDDL", 0, "Collision Hazard", None, "m", k,
                     tuple(plan[:k]), "p", "p+cue", "cue", rejected, rejected, chosen, chosen, True, 1, 0)


def test_after_repair_pairs_prefer_the_next_plan_action_or_done_over_repeating_the_repair():
    plan = [s.action for s in PLAIN.task.example_planning]
    last = len(plan) - 2  # the final CLOSE(washer) safety step, then DONE()
    mid = next(i for i, s in enumerate(PLAIN.task.example_planning) if s.is_safety_step)
    pairs = after_repair_pairs({PLAIN.name: PLAIN}, [_branch(PLAIN, last, "DONE()", plan[last]),
                                                     _branch(PLAIN, mid, plan[mid + 1], plan[mid])])
    assert [(_text(p, "chosen"), _text(p, "rejected")) for p in pairs] == [("DONE()", plan[last]),
                                                                          (plan[mid + 1], plan[mid])]
    world = PLAIN.new_world()
    for a in plan[:last + 1]:
        world.step(a)
    assert pairs[0]["prompt"][0]["content"] == build_context(PLAIN, world).prompt("compact")
    assert after_repair_pairs({}, [_branch(PLAIN, last, "DONE()", plan[last])]) == []  # unknown task
    both = extra_pairs(("after_repair", "contrast"), [PLAIN, CONTRAST], [_branch(PLAIN, last, "DONE()", plan[last])])
    assert {p["kind"] for p in both} == {"after_repair", "contrast"} and extra_pairs((), [PLAIN], []) == []


def test_sft_mixture_option_control_variant_and_extra_pairs():
    pair = [{"prompt": [{"role": "user", "content": "h"}], "chosen": [{"role": "assistant", "content": "y+"}],
             "pair_id": "p", "task": "t"}]
    sft = [{"messages": pair[0]["prompt"] + pair[0]["chosen"]}]
    golden, replay, extra = [{"kind": "golden"}], [{"kind": "replay"}], [{"kind": "contrast"}]
    sets = datasets(pair, pair, sft, replay, [], [], pair, pair, golden, extra, "golden_replay")
    assert sets["sft"] == sft + golden and sets["golden"] == golden and sets["sft_fb"][1:] == golden
    assert sets["pairs"] == sets["pairs_fb"] == sets["pairs_judged"] == pair + extra
    assert datasets(pair, pair, sft, replay, [], [], golden=golden, sft_data="corrected_episodes")["sft"] == sft + replay
    assert RECIPES["golden_replay_only"][0].data == "golden"


def test_replay_with_extra_objects_adds_the_bootstrap_actors_augmented_copies():
    from embodied_safety.envs.household.suite.augment import AugmentSettings, augment_tasks
    from embodied_safety.train.study import replay_tasks

    assert [t.name for t in replay_tasks([PLAIN, CONTRAST], 0)] == [PLAIN.name, CONTRAST.name]
    tasks = replay_tasks([PLAIN, CONTRAST], 1)
    copies = tasks[2:]
    # the same copies the bootstrap actor trained on (its augmentation, default seed)
    same = augment_tasks([PLAIN, CONTRAST], AugmentSettings(extra_copies=1))[0]
    assert tasks[:2] == [PLAIN, CONTRAST] and [c.name for c in copies] == [c.name for c in same]
    assert len(copies) == 2 and all(len(c.task.object_list) > len(o.task.object_list)
                                    for c, o in zip(copies, (PLAIN, CONTRAST), strict=True))
    rows = golden_replay(tasks)
    augmented = [r for r in rows if r["task"] == copies[0].name]
    # the plan is the original's; the context lists the extra objects
    assert [r["messages"][1]["content"] for r in augmented] == [s.action for s in copies[0].task.example_planning]
    extra = set(copies[0].task.object_list) - set(PLAIN.task.object_list)
    assert extra and all(o in augmented[0]["messages"][0]["content"] for o in extra)
