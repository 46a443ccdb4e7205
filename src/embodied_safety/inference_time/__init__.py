"""Inference-time safety baselines beside the actor (SafeBranch App. C, F.4): Self-Verification,
Lookahead, runtime full critic.

Named for when they act (at inference, beside an untrained actor), not `deployments/` (Prefect deployments)."""
