"""SafetyALFRED-style offline port (SafeBranch B.6): corpus format, generator, hint / gold-gate pairs, metrics."""
