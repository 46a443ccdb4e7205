"""The dev-split selection rule's tie test (evaluation.selection.not_worse) and the Selector that uses it."""

import pytest

from embodied_safety.evaluation.selection import OUTCOMES, mcnemar_p, metrics_only, not_worse, pick_checkpoint

pytest.importorskip("transformers")  # the Selector half loads a tiny actor

from embodied_safety.train.common import Selector, load_trainable  # noqa: E402

from .test_train import tiny_actor  # noqa: E402


def test_mcnemar_p_is_the_one_sided_exact_binomial_tail():
    assert mcnemar_p(0, 0) == 1.0  # never differ: no evidence either way
    assert mcnemar_p(1, 0) == 0.5 and mcnemar_p(2, 0) == 0.25
    assert mcnemar_p(5, 0) == pytest.approx(1 / 32)  # five tasks lost, none won: significant at 0.05
    assert mcnemar_p(5, 1) == pytest.approx(7 / 64)  # 5 of 6 discordant: not
    assert mcnemar_p(0, 3) == 1.0


def outcomes(ssr: list[int], sr: list[int] | None = None) -> dict[str, list[int]]:
    return {"ssr": ssr, "sr": sr if sr is not None else ssr}


def test_not_worse_pairs_tasks_on_the_metric_of_the_floor_side():
    best, b_out = {"sr": 0.8, "ssr": 0.6}, outcomes([1] * 6 + [0] * 4)
    one_less = {"sr": 0.8, "ssr": 0.5}
    assert not_worse(one_less, outcomes([1] * 5 + [0] * 5), best, b_out, sr_floor=0.7)
    five_less = {"sr": 0.8, "ssr": 0.1}
    assert not not_worse(five_less, outcomes([1] + [0] * 9), best, b_out, sr_floor=0.7)
    below = {"sr": 0.6, "ssr": 0.6}  # the floor is a hard line, whatever the noise
    assert not not_worse(below, b_out, best, b_out, sr_floor=0.7)
    # below the floor on both sides: SR decides, not SSR
    lo, lo_out = {"sr": 0.5, "ssr": 0.0}, outcomes([0] * 10, [1] * 5 + [0] * 5)
    assert not_worse({"sr": 0.4, "ssr": 0.5}, outcomes([1] * 5 + [0] * 5, [1] * 4 + [0] * 6), lo, lo_out, sr_floor=0.7)
    # without per-task outcomes only an equal rank is a tie
    assert not_worse(dict(best), None, best, None, 0.7) and not not_worse(one_less, None, best, None, 0.7)
    with pytest.raises(ValueError, match="lengths"):
        not_worse(one_less, outcomes([1]), best, b_out, 0.7)


def test_pick_checkpoint_takes_the_latest_tie_of_the_top():
    a, b, c = {"sr": 0.9, "ssr": 0.5}, {"sr": 0.9, "ssr": 0.6}, {"sr": 0.9, "ssr": 0.55}
    assert pick_checkpoint([(a, None), (b, None), (c, None)], 0.8) == (1, 1)  # no outcomes: strict order
    assert pick_checkpoint([(a, None), (dict(a), None)], 0.8) == (1, 0)  # equal rank: the first is top, the later kept
    bits = outcomes([1] * 12 + [0] * 8)
    assert pick_checkpoint([(b, bits), (c, outcomes([1] * 11 + [0] * 9))], 0.8) == (1, 0)
    with pytest.raises(ValueError):
        pick_checkpoint([], 0.8)


def test_metrics_only_drops_the_outcomes():
    assert metrics_only({"sr": 1, "ssr": 0.5, OUTCOMES: {"sr": [1]}}) == {"sr": 1.0, "ssr": 0.5}


def test_selector_keeps_the_latest_checkpoint_that_dev_cannot_tell_from_the_top(tmp_path):
    import torch

    base = tiny_actor(tmp_path / "base")
    model, _ = load_trainable(base, None)
    n = 20

    def point(ssr_tasks: int) -> dict:
        bits = [1] * ssr_tasks + [0] * (n - ssr_tasks)
        return {"sr": 0.9, "ssr": ssr_tasks / n, OUTCOMES: outcomes(bits, [1] * 18 + [0] * 2)}

    # step 1: 10 tasks safe; step 2: the top, 12; step 3: 11 (one fewer: a tie -> kept, the later one);
    # step 4: 5 (seven fewer: significantly worse -> the kept state stays step 3's)
    points = iter([point(0), point(10), point(12), point(11), point(5)])
    sel = Selector(lambda actor: next(points), every=1, source=base, sr_floor=0.8)
    weight = next(model.parameters())
    for step in range(5):
        with torch.no_grad():
            weight.fill_(float(step))
        sel.step(model, step)
    assert sel.top["step"] == 2 and sel.best["step"] == 3
    summary = sel.summary()
    assert summary["dev/best_ssr"] == 0.55 and summary["dev/top_step"] == 2 and summary["dev/below_floor"] == 0.0
    assert all(OUTCOMES not in p for p in sel.curve)  # per-task bits are not logged or written
    sel.restore_best(model)
    assert float(next(model.parameters()).flatten()[0]) == 3.0
