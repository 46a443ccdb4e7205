"""The policy ShieldVLA shields, and its data: the visuomotor and state policies, demonstrations, behaviour
cloning, rollouts with frames and policy evaluation (docs/shield_policy.md)."""
