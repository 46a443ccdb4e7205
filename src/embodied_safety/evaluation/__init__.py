"""Metrics (IS-Bench SR/SSR/SRec, SafeAgentBench rates), suite statistics, paired statistics and report plots.

The episode rules themselves live next to the world (``envs.household.episode``); the actor evaluator, which
runs rollouts, lives in ``rollout.actor_eval``.
"""
