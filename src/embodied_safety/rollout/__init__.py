"""Batched rollouts of an actor in the household world, and shard bookkeeping."""
