"""The inference-time baselines (Self-Verification, Lookahead, runtime full-critic) on generated
household tasks with scripted actors: what each module changes, and the call counts it reports."""

import re

from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import instantiate
from embodied_safety.envs.household.suite.templates import TEMPLATES
from embodied_safety.inference_time.baselines import (
    baseline_metrics,
    run_full_critic,
    run_lookahead,
    run_self_verification,
)
from embodied_safety.inference_time.modules import RuleValue, RuleVerifier
from embodied_safety.rollout.actor_eval import evaluate_actor
from tests.helpers import GoldenUnsafeActor


def tasks():
    out = []
    for t in TEMPLATES[:8]:
        combos = [dict(zip(sorted(t.slots), vals, strict=True)) for vals in zip(*[t.slots[k] for k in sorted(t.slots)],
                                                                               strict=False)][:2]
        out += [compile_task(instantiate(t, combo, False, "test")) for combo in combos]
    return out


class TwoPlanActor(GoldenUnsafeActor):
    """Samples alternate between the unsafe plan's next action and the full (safe) golden plan's."""

    def __init__(self, tasks) -> None:
        super().__init__(tasks)
        self.safe = {(c.task.instruction, ", ".join(c.task.object_list)): [s.action for s in c.task.example_planning]
                     for c in tasks}
        self.calls = 0

    def generate(self, prompts, temperature=0.0, seed=0):
        out = []
        for p in prompts:
            self.calls += 1
            if self.calls % 2:
                out += super().generate([p], temperature, seed)
                continue
            key = (p.split("- task_instruction: ", 1)[1].split("\n", 1)[0], p.split("- objects_list: ", 1)[1].split("\n", 1)[0])
            history = p.split("- history_actions: ", 1)[1].split("\n", 1)[0]
            done = [a for a, failed in re.findall(r"\d+\. ([A-Z_]+\([^)]*\))( \[failed)?", history) if not failed]
            plan, j = self.safe[key], 0
            for a in done:
                if j < len(plan) and a == plan[j]:
                    j += 1
            out.append(plan[j] if j < len(plan) else "DONE()")
        return out


def test_full_critic_repairs_unsafe_proposals_and_counts_critic_calls():
    ts = tasks()
    base, _ = evaluate_actor(ts, GoldenUnsafeActor(ts))
    eps = run_full_critic(ts, GoldenUnsafeActor(ts))
    m = baseline_metrics(eps, 1.0)
    assert m["eval/ssr"] > base["eval/ssr"] and m["eval/srec"] > base["eval/srec"]
    steps = sum(e.result.steps for e in eps)
    assert m["eval/cost/module_calls"] >= steps - sum(e.result.parse_failures for e in eps)  # one check per proposal
    assert m["eval/cost/actor_calls"] > steps  # repairs re-query the actor


def test_lookahead_picks_the_safer_candidate_and_restores_the_world():
    ts = tasks()
    base, _ = evaluate_actor(ts, GoldenUnsafeActor(ts))
    eps = run_lookahead(ts, TwoPlanActor(ts), RuleValue(), k=2)
    m = baseline_metrics(eps, 1.0)
    assert m["eval/ssr"] > base["eval/ssr"]
    decisions = sum(e.result.outputs for e in eps)  # steps, and the output offered after a spent budget
    assert m["eval/cost/actor_calls"] == 2 * decisions and m["eval/cost/sim_steps"] == 2 * decisions
    for e in eps:  # committed actions only: the simulated candidates were rolled back
        assert len(e.result.actions) == e.result.steps


def test_self_verification_flags_and_reprompts_up_to_the_budget():
    ts = tasks()
    base, base_results = evaluate_actor(ts, GoldenUnsafeActor(ts))
    verifier = RuleVerifier()
    eps = run_self_verification(ts, GoldenUnsafeActor(ts), verifier, retries=2)
    m = baseline_metrics(eps, 1.0)
    assert m["eval/cost/rejections"] > 0 and verifier.calls == m["eval/cost/module_calls"]
    # the verifier names a risk, not a corrective action: this actor re-proposes the same action,
    # so after R rejections the last proposal runs and the episodes equal the critic-free ones
    assert [e.result.actions for e in eps] == [r.actions for r in base_results]
    # every flagged step: R + 1 verdicts, R re-prompts; every step: one proposal
    flagged_steps, rest = divmod(m["eval/cost/rejections"], 3)
    assert rest == 0
    assert m["eval/cost/actor_calls"] == sum(e.result.outputs for e in eps) + 2 * flagged_steps
