"""Training: SFT warm-up and BranchPO (TRL's DPO objective, reference = frozen SFT checkpoint)."""
