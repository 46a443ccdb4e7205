"""Shard bookkeeping: content-hashed ids, fault injection, retry completes exactly the failed shards."""

import json

import pytest

from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import instantiate
from embodied_safety.envs.household.suite.templates import TEMPLATES
from embodied_safety.rollout.collect import chunks, collect_chunk, rollout_metrics, shard_specs
from embodied_safety.rollout.runner import RolloutSettings
from embodied_safety.rollout.shards import FaultInjector, ShardStore, WorkerCrash, inject_worker_crash
from tests.helpers import ObjectListActor

SETTINGS = RolloutSettings(max_steps=8)


def tasks():
    out = []
    for t in TEMPLATES[:6]:
        for combo in [dict(zip(sorted(t.slots), vals, strict=True)) for vals in zip(*[t.slots[k] for k in sorted(t.slots)], strict=False)][:2]:
            out.append(compile_task(instantiate(t, combo, False, "train")))
    return out


def test_shard_ids_are_content_hashes():
    ts = tasks()
    a = shard_specs(ts, "train", [0.0, 0.7], 0, "actor-a", SETTINGS)
    b = shard_specs(ts, "train", [0.0, 0.7], 0, "actor-a", SETTINGS)
    c = shard_specs(ts, "train", [0.0, 0.7], 1, "actor-a", SETTINGS)
    assert [s.id for s in a] == [s.id for s in b]
    assert len({s.id for s in a}) == len(a) == 2 * len(ts)
    assert not {s.id for s in a} & {s.id for s in c}


def test_faults_then_reruns_complete_exactly_the_failed_shards(tmp_path):
    ts = tasks()
    by_name = {c.name: c for c in ts}
    specs = shard_specs(ts, "train", [0.0, 0.3, 0.7, 1.0], 0, "test-actor", SETTINGS)
    store = ShardStore(tmp_path)
    actor = ObjectListActor()
    fault = FaultInjector(0.15, seed=3)
    for group in chunks(specs, 5):
        collect_chunk(group, by_name, actor, SETTINGS, store, fault)
    first_done = {s.id: (tmp_path / "shards" / f"{s.id}.json").read_text() for s in specs if store.done(s)}
    first_failed = [s for s in specs if not store.done(s)]
    assert first_failed and first_done, "the fault rate should fail some shards and spare others"
    assert all(store.failure(s)["attempts"] == 1 for s in first_failed)

    rounds = 0
    while pending := [s for s in specs if not store.done(s)]:
        rounds += 1
        assert rounds < 20
        for group in chunks(pending, 5):
            collect_chunk(group, by_name, actor, SETTINGS, store, fault)
    # every shard exactly once, no failure records left, earlier results untouched
    files = sorted(p.stem for p in (tmp_path / "shards").glob("*.json"))
    assert files == sorted(s.id for s in specs)
    assert not list((tmp_path / "failed").glob("*.json"))
    assert all((tmp_path / "shards" / f"{sid}.json").read_text() == text for sid, text in first_done.items())
    trajs = store.load(specs)
    assert len(trajs) == len(specs) and len({t.shard_id for t in trajs}) == len(specs)
    m = rollout_metrics(trajs, [0.0, 0.3, 0.7, 1.0])
    assert m["rollouts/n_tasks"] == len(specs) and m["rollouts/t0.0/n_tasks"] == len(ts)


def test_trajectory_records_every_query(tmp_path):
    ts = tasks()[:2]
    specs = shard_specs(ts, "train", [0.0], 0, "test-actor", SETTINGS)
    store = ShardStore(tmp_path)
    collect_chunk(specs, {c.name: c for c in ts}, ObjectListActor(done_after=3), SETTINGS, store)
    raw = json.loads((tmp_path / "shards" / f"{specs[0].id}.json").read_text())
    assert raw["schema_version"] == 1 and raw["task"] == ts[0].name
    steps = raw["steps"]
    assert steps[-1]["action"] == "DONE()" and all(s["prompt"].startswith("Your input:") for s in steps)
    assert {"raw_output", "action", "ok", "error", "reason", "state_hash_before", "state_hash_after", "snapshot"} <= set(steps[0])


def test_a_failing_actor_marks_the_whole_chunk_failed(tmp_path):
    class Broken(ObjectListActor):
        def generate(self, prompts, temperature=0.0, seed=0):
            raise ConnectionError("endpoint timed out after 3 retries")

    ts = tasks()[:3]
    specs = shard_specs(ts, "train", [0.7], 0, "broken", SETTINGS)
    store = ShardStore(tmp_path)
    assert collect_chunk(specs, {c.name: c for c in ts}, Broken(), SETTINGS, store) == {"done": 0, "failed": 3}
    assert all("endpoint timed out" in store.failure(s)["error"] for s in specs)


def test_injected_worker_crashes_are_reproducible_per_attempt():
    def crashes(rate: float, key: str, attempt: int) -> bool:
        try:
            inject_worker_crash(rate, 0, key, attempt)
        except WorkerCrash:
            return True
        return False

    draws = [[crashes(0.5, f"chunk{i}", a) for a in range(1, 5)] for i in range(40)]
    assert draws == [[crashes(0.5, f"chunk{i}", a) for a in range(1, 5)] for i in range(40)]  # same faults on a re-run
    firsts = [d[0] for d in draws]
    assert 5 < sum(firsts) < 35  # about half the first attempts die ...
    assert any(d[0] and not d[1] for d in draws)  # ... and a retry can succeed
    assert not any(crashes(0.0, f"chunk{i}", 1) for i in range(40))
    with pytest.raises(WorkerCrash, match="attempt 3"):
        inject_worker_crash(1.0, 0, "chunk", 3)


class SeededSampler:
    """A stochastic test actor: each prompt's action drawn from its own seed (one per prompt) or, given one seed
    for the batch, from ``seed + index`` (so then a prompt's sample depends on its batch position)."""

    prompt_style = "compact"

    def generate(self, prompts, temperature=0.0, seed=0):
        import random

        seeds = [seed + i for i in range(len(prompts))] if isinstance(seed, int) else list(seed)
        out = []
        for p, s in zip(prompts, seeds, strict=True):
            objects = p.split("- objects_list: ", 1)[1].split("\n", 1)[0].split(", ")
            rng = random.Random(s)
            verb = rng.choice(["OPEN", "CLOSE", "TOGGLE_ON", "TOGGLE_OFF", "WAIT", "DONE"])
            out.append(f"{verb}()" if verb in ("WAIT", "DONE") else f"{verb}({rng.choice(objects)})")
        return out


def test_a_shard_at_t1_is_the_same_run_alone_in_a_chunk_and_on_retry(tmp_path):
    ts = tasks()
    by_name = {c.name: c for c in ts}
    specs = shard_specs(ts, "train", [1.0], 0, "sampler", SETTINGS)
    target = specs[3]
    chunk, alone, retried = ShardStore(tmp_path / "chunk"), ShardStore(tmp_path / "alone"), ShardStore(tmp_path / "retry")
    collect_chunk(specs, by_name, SeededSampler(), SETTINGS, chunk)
    collect_chunk([target], by_name, SeededSampler(), SETTINGS, alone)
    shard = f"shards/{target.id}.json"
    assert (tmp_path / "chunk" / shard).read_bytes() == (tmp_path / "alone" / shard).read_bytes()
    # a retried shard: its first attempt crashed inside a chunk, the retry runs it with other chunk-mates
    fault = FaultInjector(0.3, seed=1)
    while not retried.done(target):
        pending = [s for s in specs if not retried.done(s)]
        collect_chunk(pending[::-1], by_name, SeededSampler(), SETTINGS, retried, fault)
    assert (tmp_path / "retry" / shard).read_bytes() == (tmp_path / "chunk" / shard).read_bytes()
    trajs = chunk.load(specs)
    assert len({tuple(s.action for s in t.steps) for t in trajs}) > 1  # the sampler does sample


def test_task_content_and_rollout_code_are_part_of_the_shard_key(tmp_path):
    import dataclasses

    from embodied_safety.codekey import code_key
    from embodied_safety.rollout.collect import ROLLOUT_CODE, rollout_code_key
    from tests.unit.test_codekey import copy_code

    ts = tasks()[:2]
    base = shard_specs(ts, "train", [1.0], 0, "a", SETTINGS)
    assert {s.code for s in base} == {rollout_code_key()}
    edited = dataclasses.replace(ts[0].task, instruction=ts[0].task.instruction + " Carefully.")
    other = shard_specs([compile_task(edited), ts[1]], "train", [1.0], 0, "a", SETTINGS)
    assert base[0].id != other[0].id and base[1].id == other[1].id  # same name, other content: another shard
    # a change to the world or to the actor backend changes the rollout code key, hence every shard key
    for path in ("src/embodied_safety/envs/household/world.py", "src/embodied_safety/actors/hf.py"):
        root = copy_code(tmp_path / path.replace("/", "_"))
        assert code_key(*ROLLOUT_CODE, root=root) == rollout_code_key()
        (root / path).write_text((root / path).read_text() + "\nX = 1\n")
        changed = shard_specs(ts, "train", [1.0], 0, "a", SETTINGS, code=code_key(*ROLLOUT_CODE, root=root))
        assert not {s.id for s in changed} & {s.id for s in base}


def test_a_code_or_actor_change_reruns_a_shard_with_the_same_random_numbers(tmp_path):
    """The seed comes from what is sampled (task, split, temperature, stage seed): a new code key or actor is a new
    shard (id) drawn with the same numbers, so behaviour-neutral code changes reproduce the trajectory."""
    import dataclasses

    ts = tasks()
    by_name = {c.name: c for c in ts}
    base = shard_specs(ts, "train", [1.0], 0, "sampler", SETTINGS)
    moved = [dataclasses.replace(s, code="another-code-key", actor="another-actor") for s in base]
    assert all(a.id != b.id and a.rng_seed == b.rng_seed for a, b in zip(base, moved, strict=True))
    assert len({s.rng_seed for s in base}) == len(base)  # one stream per task
    other_t = shard_specs(ts, "train", [0.7], 0, "sampler", SETTINGS)
    other_seed = shard_specs(ts, "train", [1.0], 1, "sampler", SETTINGS)
    assert not {s.rng_seed for s in base} & {s.rng_seed for s in other_t + other_seed}
    first, second = ShardStore(tmp_path / "a"), ShardStore(tmp_path / "b")
    collect_chunk(base, by_name, SeededSampler(), SETTINGS, first)
    collect_chunk(moved, by_name, SeededSampler(), SETTINGS, second)
    steps = [[(s.action, s.ok) for s in t.steps] for t in first.load(base)]
    assert steps == [[(s.action, s.ok) for s in t.steps] for t in second.load(moved)]
    assert len({tuple(t) for t in steps}) > 1  # the sampler does sample
