"""``data/baselines/table14.md`` is a hashed output: its bytes depend on the episodes, not on how long they took."""


def test_table14_is_the_same_whatever_the_wall_time():
    from flows.baselines import table14

    def rows(seconds: float) -> dict:
        m = {"eval/sr": 0.5, "eval/ssr": 0.25, "eval/srec": 0.1, "eval/n_tasks": 4, "eval/mean_steps": 3.0,
             "eval/cost/actor_calls": 12, "eval/cost/module_calls": 7, "eval/cost/seconds": seconds}
        return {"base": {"test": dict(m)}, "lookahead": {"test": dict(m)}}

    a, b = table14(rows(21.7), ("test",)), table14(rows(47.2), ("test",))
    assert a == b and "seconds" not in a
    assert "| Lookahead (Alg. 2) | 0.500 | 0.250 | 0.100 | 3.0 | 7 value |" in a
