"""DAgger with the privileged expert, and BC checkpoint selection by closed-loop SR (tiny envs, CPU, seconds)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
gym = pytest.importorskip("gymnasium")

from embodied_safety.shield.policy.bc import pick_checkpoint, selection_key, sr_standard_error, train_bc  # noqa: E402
from embodied_safety.shield.policy.dagger import collect_dagger, dagger  # noqa: E402
from embodied_safety.shield.policy.demos import DemoSet, collect_demos, episode_seeds  # noqa: E402
from tests.unit.test_shield_policy import LineEnv, line_expert, one_thread, small_policy  # noqa: E402, F401 (autouse fixture)


def replay_labels(data: DemoSet) -> np.ndarray:
    """The expert's action at every state reached by replaying the executed actions from each episode seed."""
    env, out = LineEnv(), []
    for e, seed in enumerate(data.episode_seeds):
        _, info = env.reset(seed=int(seed))
        for a in data.executed[data.episode == e]:
            out.append(line_expert(info, env, None))
            *_, info = env.step(a)
    return np.asarray(out, np.float32)


def test_dagger_labels_the_policys_own_states_with_the_expert():
    policy = small_policy()
    seeds = episode_seeds(7, range(5))
    new = collect_dagger(policy, line_expert, seeds, make_env=LineEnv, n_envs=2)
    assert new.n_episodes == 5 and new.n_steps == int(new.episode_length.sum())
    # executed = the policy's mean on the frame it saw (its own states), target = the expert there
    mean, _ = policy.act({"image": new.images, "instruction": new.step_instructions()}, deterministic=True)
    np.testing.assert_allclose(new.executed, mean.numpy(), atol=1e-5)
    np.testing.assert_allclose(new.actions, replay_labels(new), atol=1e-6)
    assert np.abs(new.executed - new.actions).max() > 0.1  # the untrained policy is not the expert
    again = collect_dagger(policy, line_expert, seeds, make_env=LineEnv, n_envs=3)  # other batching, same data
    np.testing.assert_array_equal(again.images, new.images)
    np.testing.assert_allclose(again.actions, new.actions, atol=1e-6)
    # beta = 1: the expert drives, labels still its actions
    expert_run = collect_dagger(policy, line_expert, seeds, make_env=LineEnv, beta=1.0)
    np.testing.assert_allclose(expert_run.executed, expert_run.actions, atol=1e-6)


def test_dagger_aggregates_rounds():
    demos = collect_demos(LineEnv, line_expert, n_episodes=4, seed=0)
    policy = small_policy()
    hist, data = dagger(policy, demos, line_expert, rounds=2, episodes=3, bc_epochs=1, epochs=1, seed=0,
                        make_env=LineEnv, batch_size=16, lr=1e-3, shift=0, select_by="nll")
    assert data.n_episodes == 4 + 2 * 3
    np.testing.assert_array_equal(data.images[:demos.n_steps], demos.images)  # the demos come first
    np.testing.assert_array_equal(data.episode_seeds[4:], episode_seeds(1200, range(6)))  # new seeds each round
    assert [r["round"] for r in hist.rounds] == [0.0, 1.0, 2.0]
    assert [r["steps"] for r in hist.rounds] == sorted(r["steps"] for r in hist.rounds)
    assert hist.rounds[-1]["steps"] == data.n_steps
    assert [r["epoch"] for r in hist.rows] == [1.0, 2.0, 3.0] and [r["round"] for r in hist.rows] == [0.0, 1.0, 2.0]
    # the rounds' new episodes are the (then current) policy's own, labelled by the expert
    np.testing.assert_allclose(data.actions[demos.n_steps:], replay_labels(data.episodes(range(4, 10))), atol=1e-6)
    assert not np.allclose(data.executed[demos.n_steps:], data.actions[demos.n_steps:])


def test_selection_by_sr_picks_the_best_sr_checkpoint():
    demos = collect_demos(LineEnv, line_expert, n_episodes=6, seed=0)
    cases = {  # per-evaluation (sr, violation rate) -> epoch expected
        "best sr": ([(0.1, 0.0), (0.5, 0.4), (0.3, 0.0), (0.2, 0.0)], 2),
        "tie -> lower violation": ([(0.5, 0.3), (0.2, 0.0), (0.5, 0.1), (0.5, 0.2)], 3),
    }
    for name, (scores, expected) in cases.items():
        policy = small_policy()
        snapshots = []

        def fake_eval(p, scores=scores, snapshots=snapshots):
            snapshots.append({k: v.clone() for k, v in p.state_dict().items()})
            sr, vr = scores[len(snapshots) - 1]
            return {"sr": sr, "violation_rate": vr}

        hist = train_bc(policy, demos, epochs=4, batch_size=16, lr=1e-3, seed=0, shift=0, eval_fn=fake_eval,
                        select_by="sr")
        assert hist.best_epoch == expected, name
        for k, v in policy.state_dict().items():
            torch.testing.assert_close(v, snapshots[expected - 1][k], msg=name)
    # the old rule: lowest held-out NLL, whatever the SR
    policy = small_policy()
    hist = train_bc(policy, demos, epochs=4, batch_size=16, lr=1e-3, seed=0, shift=0, select_by="nll",
                    eval_fn=lambda p: {"sr": 0.0, "violation_rate": 0.0})
    assert hist.best_epoch == 1 + int(np.argmin([r["val_loss"] for r in hist.rows]))
    assert selection_key({"epoch": 1.0, "val_loss": 0.3}, "sr") is None  # not evaluated: no candidate
    assert (selection_key({"epoch": 1, "val_loss": 0.2, "sr": 0.4, "violation_rate": 0.1}, "sr")
            < selection_key({"epoch": 2, "val_loss": 0.1, "sr": 0.4, "violation_rate": 0.2}, "sr"))
    with pytest.raises(ValueError):
        selection_key({"epoch": 1.0}, "return")


def row(epoch: int, sr: float, violation: float, episodes: float = 100.0, val: float = 0.5) -> dict[str, float]:
    return {"epoch": float(epoch), "sr": sr, "violation_rate": violation, "episodes": episodes, "val_loss": val}


def test_one_standard_error_rule_prefers_the_safer_checkpoint_within_the_noise():
    assert sr_standard_error(row(1, 0.25, 0.0, episodes=100)) == pytest.approx(np.sqrt(0.25 * 0.75 / 100))
    assert sr_standard_error({"sr": 0.3}) == 0.0  # no episode count: no tolerance
    rows = [row(5, 0.11, 0.35), row(10, 0.27, 0.39), row(15, 0.20, 0.10), row(20, 0.26, 0.26), row(25, 0.24, 0.30)]
    # SE of the best (0.27 over 100 episodes) = 0.044: 0.26 and 0.24 are as good on success; 0.20 is not
    assert pick_checkpoint(rows, "sr") == 1
    assert pick_checkpoint(rows, "sr_1se") == 3
    # with 1,000 episodes the SE is 0.014: only 0.27 and 0.26 tie, and 0.26 is still the safer
    many = [{**r, "episodes": 1000.0} for r in rows]
    assert pick_checkpoint(many, "sr_1se") == 3
    many[3]["sr"] = 0.25  # now outside one SE: the best SR wins
    assert pick_checkpoint(many, "sr_1se") == 1
    # equal violation inside the pool: the higher SR, then the lower held-out NLL
    assert pick_checkpoint([row(1, 0.25, 0.2), row(2, 0.27, 0.2)], "sr_1se") == 1
    assert pick_checkpoint([row(1, 0.27, 0.2, val=0.4), row(2, 0.27, 0.2, val=0.3)], "sr_1se") == 1
    # rows without an evaluation are no candidates; none at all -> None
    assert pick_checkpoint([{"epoch": 1.0, "val_loss": 0.1}, row(2, 0.1, 0.9)], "sr_1se") == 1
    assert pick_checkpoint([{"epoch": 1.0, "val_loss": 0.1}], "sr_1se") is None


def test_sr_1se_restores_the_safer_weights_in_bc_and_across_dagger_rounds():
    demos = collect_demos(LineEnv, line_expert, n_episodes=6, seed=0)
    scores = [(0.30, 0.40), (0.10, 0.0), (0.28, 0.20), (0.31, 0.45)]  # (sr, violation) per evaluation
    policy, snapshots = small_policy(), []

    def fake_eval(p):
        snapshots.append({k: v.clone() for k, v in p.state_dict().items()})
        sr, vr = scores[len(snapshots) - 1]
        return {"sr": sr, "violation_rate": vr, "episodes": 100.0}

    hist = train_bc(policy, demos, epochs=4, batch_size=16, lr=1e-3, seed=0, shift=0, eval_fn=fake_eval,
                    select_by="sr_1se")
    assert hist.best_epoch == 3 and hist.final()["select_by_sr"] == 1.0  # 0.28 is within 0.046 of 0.31
    for k, v in policy.state_dict().items():
        torch.testing.assert_close(v, snapshots[2][k])
    # DAgger: each round chooses its own, then the rounds' choices are compared by the same rule
    scores[:] = [(0.30, 0.40), (0.20, 0.0), (0.27, 0.10)]  # round 0, 1, 2 (one evaluation each)
    policy, snapshots[:] = small_policy(), []
    hist, _ = dagger(policy, demos, line_expert, rounds=2, episodes=2, bc_epochs=1, epochs=1, seed=0,
                     make_env=LineEnv, batch_size=16, lr=1e-3, shift=0, eval_fn=fake_eval, select_by="sr_1se")
    assert hist.best_epoch == 3  # round 2's 0.27 / 0.10 beats round 0's 0.30 / 0.40 within one SE
    for k, v in policy.state_dict().items():
        torch.testing.assert_close(v, snapshots[2][k])
    policy, snapshots[:] = small_policy(), []
    hist, _ = dagger(policy, demos, line_expert, rounds=2, episodes=2, bc_epochs=1, epochs=1, seed=0,
                     make_env=LineEnv, batch_size=16, lr=1e-3, shift=0, eval_fn=fake_eval, select_by="sr")
    assert hist.best_epoch == 1  # plain SR: round 0
