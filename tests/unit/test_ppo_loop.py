"""The gated PPO loop's pieces (rollout collection, advantages, gate, update) on a tiny CPU budget: Dubins-VL's
7-D state, a small MLP policy, two iterations; seconds."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from embodied_safety.shield.costs.margins import MarginSource  # noqa: E402
from embodied_safety.shield.policy.state import StatePolicy, StatePolicyConfig  # noqa: E402
from embodied_safety.shield.rl.critic import CriticConfig  # noqa: E402
from embodied_safety.shield.rl.ppo import GatedPPO, PPOConfig, advantages, train  # noqa: E402


def _cfg(**kw: object) -> PPOConfig:
    base = dict(method="gated", margin="gt", safety_update="advantage", obs="state", critic_replay="images",
                train_encoder=True, num_envs=4, rollout_steps=110, total_steps=880, c_max=0.0,
                critic=CriticConfig(hidden=(16, 16), batch_size=32, steps_per_iter=2), seed=0)
    return PPOConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_one_iteration_step_by_step_keeps_the_books() -> None:
    torch.manual_seed(0)
    cfg = _cfg()
    run = GatedPPO(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg)
    try:
        ro = run.collect()
        T, n = cfg.rollout_steps, cfg.num_envs
        assert ro.size == T * n and run.steps == T * n and len(ro.instructions) == T
        assert ro.features.shape[:2] == (T, n) and ro.actions.shape == (T, n, 1)
        assert torch.isfinite(ro.log_probs).all()
        low, high = run.low.item(), run.high.item()
        assert float(ro.actions.min()) >= low and float(ro.actions.max()) <= high
        # the training cost is 1[ℓ(reached) < 0] of the margin source (an exit: the steps it cut off, see
        # test_leaving_the_workspace_is_a_failure_for_the_training_signal), a terminated step bootstraps nothing
        assert np.array_equal(np.minimum(ro.costs, 1.0), (ro.reached_ell < 0).astype(float))
        assert not ro.next_values[ro.terminated > 0].any()
        # 110 steps > the 100-step time limit: every slot finished at least one episode
        ep = run.episodes.drain()
        assert ep["episodes"] == ro.dones.sum() >= n
        # finished episodes + the running sums of the unfinished ones = everything collected
        assert ep["return"] * ep["episodes"] + run.episodes.ret.sum() == pytest.approx(ro.rewards.sum())
        assert ep["train_cost"] * ep["episodes"] + run.episodes.train_cost.sum() == pytest.approx(ro.costs.sum())
        assert 0.0 <= ep["sr"] <= ep["reach"] <= 1.0 and ep["csc"] >= 0.0

        critic_log = run.train_critic(ro)
        assert critic_log and all(math.isfinite(v) for v in critic_log.values())
        dual = run.update_dual(ep)  # c_max = 0: any training cost raises β, always inside its clip
        assert cfg.beta_min <= dual <= cfg.beta_max
        assert dual == pytest.approx(np.clip(cfg.beta0 + cfg.eta * ep["train_cost"], cfg.beta_min, cfg.beta_max))

        gate = run.gate(ro)
        assert set(gate.gate.unique().tolist()) <= {0.0, 1.0} and gate.gate.shape == (ro.size,)
        assert 0.0 <= gate.stats["infeasible_frac"] <= 1.0
        assert gate.stats["infeasible_frac"] == pytest.approx(1.0 - float(gate.gate.mean()))

        adv = advantages(ro, gate.costs, cfg, dual, with_cost=run.cost_value is not None)
        assert adv.cost_ret is not None  # the cost-advantage update has a cost value head
        for t in (adv.adv, adv.ret, adv.cost_adv, adv.cost_ret):
            assert t.shape == (ro.size,) and torch.isfinite(t).all()
        assert float(adv.cost_adv.mean()) == pytest.approx(0.0, abs=1e-5)  # normalised

        before = [p.detach().clone() for p in run.pi_params]
        stats = run.update(ro, adv, gate)
        assert all(math.isfinite(stats[k]) for k in ("approx_kl", "clipfrac", "pg_loss", "log_std"))
        assert 0.0 <= stats["clipfrac"] <= 1.0 and stats["kl_stop"] in (0.0, 1.0)
        assert any(not torch.equal(a, b) for a, b in zip(before, run.pi_params, strict=True))
    finally:
        run.close()


@pytest.mark.parametrize(("method", "safety_update"), [("ppo_lag", "advantage"), ("gated", "advantage"),
                                                       ("gated", "dpg"), ("gated", "mixed"), ("penalty", "advantage")])
def test_train_two_iterations(method: str, safety_update: str) -> None:
    """Every PPO method and safety step of the stage's run matrix (``rl.runs.RUNS``) trains end to end here, on the
    state policy; the Dubins-VL stage test runs only a few of them on pixels."""
    torch.manual_seed(0)
    cfg = _cfg(method=method, safety_update=safety_update, rollout_steps=64, total_steps=512)
    logged: list[int] = []
    res = train(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg,
                log=lambda m, it: logged.append(it), progress=None)
    assert cfg.iterations == 2 and len(res.history) == 2 and logged == [1, 2]
    assert [r["env_steps"] for r in res.history] == [256.0, 512.0]
    for row in res.history:
        assert all(math.isfinite(row[k]) for k in ("approx_kl", "pg_loss", "dual", "seconds"))
        if method == "gated":
            assert 0.0 <= row["infeasible_frac"] <= 1.0 and math.isfinite(row["critic_loss"])
        elif method == "ppo_lag":
            assert "infeasible_frac" not in row and row["dual"] >= 0.0
    assert sum(r["episodes"] for r in res.history) >= cfg.num_envs  # 128 steps: every slot finished one
    assert (res.critic is not None) == (method in ("gated", "penalty"))


@pytest.mark.parametrize("shared", [True, False])
def test_feature_replay_encodes_each_frame_once_with_the_old_values(shared: bool) -> None:
    """Feature replay (issue 21: speed): what ``train_critic`` puts in replay and what the gate reads are the
    features a per-frame encoding gives (critic encoder of o and o', policy encoder of o'), whether the critic
    reads the policy's features (the same frozen weights) or encodes each frame once itself."""
    from embodied_safety.shield.rl.critic import SafetyCritic

    torch.manual_seed(0)
    cfg = _cfg(critic_replay="features", train_encoder=False, rollout_steps=110, total_steps=440)
    policy = StatePolicy(StatePolicyConfig())
    critic = SafetyCritic.from_policy(policy, cfg.critic)
    if not shared:
        with torch.no_grad():
            for p in critic.encoder.parameters():
                p.add_(0.1 * torch.randn(p.shape))
    run = GatedPPO(policy, "dubins", MarginSource("gt"), cfg, critic)
    try:
        assert run.shared_encoder == shared
        ro = run.collect()
        assert ro.dones.sum() >= cfg.num_envs  # episode ends inside the rollout: o' is not the next o there
        run.train_critic(ro)
        n, buf = ro.size, run.buffer
        instr = ro.flat_instructions()
        with torch.no_grad():
            want = {"feature": critic.encoder(ro.flat_images(), instr),
                    "next_feature": critic.encoder(ro.flat_images(reached=True), instr),
                    "next_policy_feature": policy.features(ro.flat_images(reached=True), instr)}
        for k, v in want.items():
            assert np.allclose(buf.arrays[k][:n], v.numpy(), atol=1e-5), k
        gate = run.gate(ro)
        assert torch.allclose(gate.critic_features, want["feature"], atol=1e-5)
    finally:
        run.close()


def test_value_warmup_leaves_the_policy_and_dual_alone_then_the_kl_anchor_decays() -> None:
    """Issue 21 item 2: the first ``value_warmup`` iterations fit only the value heads on the start policy's
    returns (the policy, β and the env-step count as in any iteration); afterwards the KL to the start policy is
    weighted ``kl_start`` at the first policy iteration and decays linearly."""
    from embodied_safety.shield.rl.ppo import gaussian_kl

    torch.manual_seed(0)
    cfg = _cfg(method="ppo_lag", rollout_steps=64, total_steps=1024, value_warmup=2, kl_start=0.5, c_max=0.0)
    policy = StatePolicy(StatePolicyConfig())
    start = [p.detach().clone() for p in policy.parameters()]
    seen: list[list[torch.Tensor]] = []
    value_seen: list[list[torch.Tensor]] = []
    run = GatedPPO(policy, "dubins", MarginSource("gt"), cfg)
    value0 = [p.detach().clone() for p in run.value.parameters()]
    try:
        for _ in (1, 2):  # the warm-up iterations, as train() runs them
            ro = run.collect()
            run.episodes.drain()
            gate = run.gate(ro)
            run.update(ro, advantages(ro, gate.costs, cfg, run.dual, True), gate, policy_step=False)
            seen.append([p.detach().clone() for p in policy.parameters()])
            value_seen.append([p.detach().clone() for p in run.value.parameters()])
        assert all(torch.equal(a, b) for a, b in zip(start, seen[-1], strict=True))  # policy untouched
        assert any(not torch.equal(a, b) for a, b in zip(value0, value_seen[-1], strict=True))  # values fitted
    finally:
        run.close()

    res = train(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg, progress=None)
    rows = res.history
    assert [r["value_warmup"] for r in rows] == [1.0, 1.0, 0.0, 0.0]
    assert rows[0]["dual"] == rows[1]["dual"] == cfg.lambda0  # no dual step while warming up
    assert "kl_start" not in rows[0] and rows[2]["kl_weight"] == pytest.approx(0.5)
    assert rows[3]["kl_weight"] == pytest.approx(0.25)  # linear decay over the 2 policy iterations
    assert rows[2]["kl_start"] >= 0.0 and rows[3]["kl_start"] > 0.0  # the policy moved away from the anchor

    m0, s0 = torch.zeros(3, 2), torch.zeros(3, 2)
    assert float(gaussian_kl(m0, s0, m0, s0)) == pytest.approx(0.0)
    # KL(N(0,1) || N(1,1)) = 0.5 per dim
    assert float(gaussian_kl(m0, s0, m0 + 1.0, s0)) == pytest.approx(1.0)


@pytest.mark.parametrize("exit_is_failure", [True, False])
def test_leaving_the_workspace_is_a_failure_for_the_training_signal(exit_is_failure: bool) -> None:
    """Dubins-VL ends an episode when the car leaves ``[-1, 1]²``. With ``exit_is_failure`` that transition's
    training cost is the number of steps it cut off and its margin is at most ``EXIT_MARGIN`` (so an exit is not a
    way to stop accruing cost); without it an exit costs what the reached frame's margin says (0 or 1)."""
    from embodied_safety.shield.rl.exits import EXIT_MARGIN

    torch.manual_seed(0)
    cfg = _cfg(exit_is_failure=exit_is_failure, rollout_steps=110)
    run = GatedPPO(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg)
    try:
        ro = run.collect()
    finally:
        run.close()
    exits = (ro.terminated > 0) & (ro.rewards < -2.0)  # the env's exit penalty: -2√2 per step cut off
    assert exits.any()  # an untrained policy drives off the map within 110 steps
    steps_cut = np.round(-ro.rewards[exits] / (2 * math.sqrt(2)))
    if exit_is_failure:
        assert np.array_equal(ro.costs[exits], steps_cut) and (ro.reached_ell[exits] <= EXIT_MARGIN).all()
    else:
        assert (ro.costs[exits] <= 1.0).all()
    assert (ro.costs[~exits] <= 1.0).all()  # every other transition: 1[ℓ < 0]


def test_exit_summary_counts_episodes_that_left_the_workspace() -> None:
    """An untrained image policy drives off the map: every episode that neither reached nor ran 100 steps is an
    exit, and the rates partition the episodes."""
    from embodied_safety.shield.policy.visuomotor import PolicyConfig, VisuomotorPolicy
    from embodied_safety.shield.rl.evaluation import exit_summary

    torch.manual_seed(0)
    policy = VisuomotorPolicy(PolicyConfig.for_space((84, 84, 3), [-1.0], [1.0])).eval()
    s = exit_summary(policy, episodes=8)
    assert s["episodes"] == 8 and 0.0 <= s["exit_and_unsafe_rate"] <= s["exit_rate"] <= 1.0
    assert s["exit_rate"] + s["reach_rate"] <= 1.0 + 1e-9
    assert s["exit_rate"] > 0.0 or s["mean_length"] == 100.0


def test_the_dual_ascends_on_the_margin_cost_not_the_exit_price() -> None:
    """``dual_cost: margin``: the exit price stays in the training cost the advantages use, but c̄ in Eq. 7 counts
    unsafe steps only; ``train`` (the default) ascends on the exit-priced cost."""
    torch.manual_seed(0)
    cfg = _cfg(dual_cost="margin", exit_is_failure=True, rollout_steps=110)
    run = GatedPPO(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg)
    try:
        ro = run.collect()
        ep = run.episodes.drain()
        exits = (ro.terminated > 0) & (ro.rewards < -2.0)
        assert exits.any() and (ro.costs[exits] > 1.0).any()  # priced exits in the training cost
        # every margin cost is a 0/1 step cost: the non-exit steps' costs plus at most one per exit step
        total_margin = ep["margin_cost"] * ep["episodes"] + run.episodes.margin_cost.sum()
        non_exit = ro.costs[~exits].sum()
        assert non_exit <= total_margin <= non_exit + exits.sum()
        assert ep["margin_cost"] < ep["train_cost"]
        dual = run.update_dual(ep)
        assert dual == pytest.approx(np.clip(cfg.beta0 + cfg.eta * ep["margin_cost"], cfg.beta_min, cfg.beta_max))
        run.cfg, run.dual = dataclasses.replace(cfg, dual_cost="train"), cfg.beta0
        assert run.update_dual(ep) == pytest.approx(np.clip(cfg.beta0 + cfg.eta * ep["train_cost"], cfg.beta_min,
                                                            cfg.beta_max))
    finally:
        run.close()
    with pytest.raises(ValueError, match="dual_cost"):
        _cfg(dual_cost="exits")


def test_without_online_td_the_warm_critic_is_kept_as_warmed() -> None:
    """``online_td: false`` (the oracle reference): no TD step and no replay during PPO; the gate still reads it."""
    from embodied_safety.shield.rl.critic import SafetyCritic

    torch.manual_seed(0)
    cfg = _cfg(online_td=False, critic_replay="features", train_encoder=False, total_steps=880)
    policy = StatePolicy(StatePolicyConfig())
    critic = SafetyCritic.from_policy(policy, cfg.critic)
    before = {k: v.clone() for k, v in critic.state_dict().items()}
    res = train(policy, "dubins", MarginSource("gt"), cfg, critic=critic, progress=None)
    assert res.critic is not None and len(res.history) == cfg.iterations
    assert all(torch.equal(before[k], v) for k, v in res.critic.state_dict().items())
    assert all("critic_loss" not in h and 0.0 <= h["infeasible_frac"] <= 1.0 for h in res.history)
    run = GatedPPO(policy, "dubins", MarginSource("gt"), cfg, critic=critic)
    try:  # nothing allocated for TD that never runs (an image replay is 30 k frames)
        assert run.buffer is None and run.trainer is None and run.collect().reached_features is None
    finally:
        run.close()


def test_recovery_weight_replaces_the_dual_in_the_recovery_step() -> None:
    """``recovery_weight`` (stop 48): the recovery pull's weight instead of β. With every sample flagged (δ above any
    Q), weight 0 leaves no safety term; the default (β) and a fixed weight pull the mean toward a*."""
    losses = {}
    for weight in (None, 0.0, 0.2):
        torch.manual_seed(0)
        cfg = _cfg(safety_update="recovery", delta=1e6, rollout_steps=64, total_steps=256, recovery_weight=weight)
        res = train(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg, progress=None)
        assert all(h["infeasible_frac"] == 1.0 for h in res.history)
        losses[weight] = res.history[0]["safety_loss"]
    assert losses[0.0] == 0.0 and losses[None] > 0.0 and losses[0.2] > 0.0
    assert losses[0.2] < losses[None]  # a pull weighted 0.2 against β ≈ 3 (the logged term is weight × distance)


def test_the_kl_floor_option_holds_the_anchor_at_its_floor() -> None:
    """``PPOConfig.kl_floor`` (a stage option: ``shield_ppo.cpu.<env>.kl_floor``): the anchor decays linearly until it
    reaches ``kl_floor · kl_start``, then stays there; the training loop is otherwise the same."""
    cfg = _cfg(method="ppo_lag", rollout_steps=32, total_steps=4 * 4 * 32, kl_start=0.8)
    torch.manual_seed(0)  # the policy's initial weights come from the global generator
    plain = train(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), cfg, progress=None).history
    torch.manual_seed(0)
    held = train(StatePolicy(StatePolicyConfig()), "dubins", MarginSource("gt"), dataclasses.replace(cfg, kl_floor=0.5),
                 progress=None).history
    assert [r["kl_weight"] for r in plain] == pytest.approx([0.8, 0.6, 0.4, 0.2])
    assert [r["kl_weight"] for r in held] == pytest.approx([0.8, 0.6, 0.4, 0.4])
    # the same run until the floor bites: the KL to the start measured in the first three updates is the same
    assert [r["kl_start"] for r in plain[:3]] == [r["kl_start"] for r in held[:3]]
    assert plain[3]["kl_start"] != held[3]["kl_start"]
