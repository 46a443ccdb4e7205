"""Episode runners, metrics (IS-Bench SR/SSR/SRec, SafeAgentBench rates) and report plots."""
