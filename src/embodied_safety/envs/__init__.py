"""Simulators: the symbolic household world, the SafeAgentBench world and control envs."""
