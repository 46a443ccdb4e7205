"""The HJ safety critic, feasibility-gated PPO and its baselines, the offline gate check, the ``shield_ppo``
stage's run matrix and its tables and figures (docs/shield_ppo.md)."""
