"""Actors: prompts, output parsing, the HF and OpenAI-compatible backends, the bootstrap actor."""
