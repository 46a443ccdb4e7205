"""Deployment-time safety baselines beside the actor (SafeBranch App. C, F.4)."""
