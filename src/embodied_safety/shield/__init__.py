"""ShieldVLA: rubric-guided safety shield for language-conditioned visuomotor policies (paper 2)."""
