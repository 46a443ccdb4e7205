"""SafeAgentBench evaluation: planners (reference, rule guard, zero-shot and ReAct LLM), the episode runner,
semantic judges (rule and LLM) and the metrics (rejection, risk, success, execution) per task type."""
