"""Safety critics and the judge: rule backend (ground-truth conditions + simulator) and LLM backend."""
