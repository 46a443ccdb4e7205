"""The one structured-ask loop (``embodied_safety.llm``): re-asks only what failed, per-attempt temperature and
seed, the on-disk cache (hits make no call, failures stored or not, atomic files), JSON extraction."""

import hashlib
import json

import pytest

from embodied_safety.llm.ask import Answer, ask_batch, ask_cached, cache_key
from embodied_safety.llm.parsing import first_json_object, json_object


class Complete:
    """A fake ``complete``: replies ``"<item>@<seed>"`` and records every call (the input under test)."""

    def __init__(self):
        self.calls = []

    def __call__(self, items, temperature, seed):
        self.calls.append((list(items), temperature, seed))
        return [f"{item}@{seed}" for item in items]


def accept(text):
    """'a' is valid at once, 'b' from seed 6 on, anything else never."""
    item, seed = text.split("@")
    if item == "a" or (item == "b" and int(seed) >= 6):
        return text.upper()
    raise ValueError(f"bad {text}")


def test_ask_batch_reasks_only_the_failed_items_with_per_attempt_temperature_and_seed():
    complete = Complete()
    answers = ask_batch(complete, ["a", "b", "c"], accept, retries=2, temperature=0.0, retry_temperature=0.7, seed=5)
    assert complete.calls == [(["a", "b", "c"], 0.0, 5), (["b", "c"], 0.7, 6), (["c"], 0.7, 7)]
    assert answers == [
        Answer(True, "A@5", None, ("a@5",), 1),
        Answer(True, "B@6", None, ("b@5", "b@6"), 2),
        Answer(False, None, "bad c@7", ("c@5", "c@6", "c@7"), 3),
    ]


def test_ask_batch_defaults_per_item_parsers_and_errors():
    complete = Complete()
    answers = ask_batch(complete, ["b", "x"], [accept, str.upper], retries=1, temperature=0.3, seed=5)
    assert [c[1:] for c in complete.calls] == [(0.3, 5), (0.3, 6)]  # re-asks keep the temperature by default
    assert [a.value for a in answers] == ["B@6", "X@5"] and [a.calls for a in answers] == [2, 1]
    assert ask_batch(complete, [], accept, retries=3) == [] and len(complete.calls) == 2  # nothing to ask: no call
    with pytest.raises(ValueError, match="1 parsers for 2 items"):
        ask_batch(complete, ["a", "b"], [accept], retries=0)
    with pytest.raises(RuntimeError, match="1 replies for 2 items"):
        ask_batch(lambda items, t, s: ["only one"], ["a", "b"], accept, retries=0)

    def broken(items, t, s):
        raise ConnectionError("endpoint down")

    with pytest.raises(ConnectionError):  # not a bad reply: it propagates
        ask_batch(broken, ["a"], accept, retries=2)


def test_ask_cached_hits_make_no_call_and_failures_are_stored_per_option(tmp_path):
    complete = Complete()
    keys = [cache_key("m", item) for item in ("a", "c")]
    first = ask_cached(complete, ["a", "c"], keys, accept, tmp_path, "m", retries=1)
    assert [a.ok for a in first] == [True, False] and len(complete.calls) == 2
    rec = json.loads((tmp_path / f"{keys[1]}.json").read_text())
    assert rec == {"ok": False, "value": None, "error": "bad c@1", "raw": ["c@0", "c@1"], "model": "m"}
    again = ask_cached(complete, ["a", "c"], keys, accept, tmp_path, "m", retries=1)
    assert len(complete.calls) == 2 and [a.calls for a in again] == [0, 0]  # both served from the cache
    assert [(a.ok, a.value, a.error, a.raw) for a in again] == [(a.ok, a.value, a.error, a.raw) for a in first]
    retry = ask_cached(complete, ["a", "c"], keys, accept, tmp_path, "m", retries=1, seed=10, retry_failed=True)
    assert complete.calls[2:] == [(["c"], 0.0, 10), (["c"], 0.0, 11)]  # only the stored failure is asked again
    assert retry[0].calls == 0 and retry[1].raw == ("c@10", "c@11")
    # successes only: a failure leaves no file and is asked again next time
    other = tmp_path / "successes"
    ask_cached(complete, ["a", "c"], keys, accept, other, "m", retries=0, cache_failures=False)
    assert sorted(p.name for p in other.iterdir()) == [f"{keys[0]}.json"]
    n = len(complete.calls)
    ask_cached(complete, ["a", "c"], keys, accept, other, "m", retries=0, cache_failures=False)
    assert complete.calls[n:] == [(["c"], 0.0, 0)]
    ask_cached(complete, ["a"], keys[:1], accept, None, "m", retries=0)  # no cache dir: always asks
    assert len(complete.calls) == n + 2


def test_cache_files_are_written_atomically(tmp_path, monkeypatch):
    import embodied_safety.io as io

    def crash(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(io.os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        ask_cached(Complete(), ["a"], ["k"], accept, tmp_path, "m", retries=0)
    assert list(tmp_path.iterdir()) == []  # neither a partial k.json nor a temp file is left
    monkeypatch.undo()
    ask_cached(Complete(), ["a"], ["k"], accept, tmp_path, "m", retries=0)
    assert [p.name for p in tmp_path.iterdir()] == ["k.json"]


def test_cache_key_is_sha256_over_length_prefixed_parts():
    expected = hashlib.sha256(b"\x02" + b"\0" * 7 + b"ab" + b"\x01" + b"\0" * 7 + b"c").hexdigest()
    assert cache_key("ab", b"c") == expected
    assert cache_key("ab", "c") != cache_key("a", "bc")


def test_first_json_object_handles_prose_and_nesting():
    assert first_json_object('Sure! {"a": {"b": 1}, "c": "}"} trailing') == {"a": {"b": 1}, "c": "}"}
    assert first_json_object("{not json} then {\"x\": 2}") == {"x": 2}
    assert first_json_object("[1, 2] no object") is None and first_json_object("no json here") is None
    with pytest.raises(ValueError, match="no JSON object in 'no json here'"):
        json_object("no json here")
