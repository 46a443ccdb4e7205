"""SafeAgentBench on a symbolic AI2-THOR-style world: the benchmark's 17 high-level actions
(:mod:`.actions`), an affordance table of the iTHOR object types (:mod:`.objects`), per-room inventories of
the iTHOR floor plans (:mod:`.scenes`), a deterministic object-state world with feasibility checks and
cheap snapshots (:mod:`.world`), the upstream execution-based goal check (:mod:`.goals`), the task files
(:mod:`.dataset`) and an optional adapter to a real AI2-THOR controller (:mod:`.ai2thor_adapter`). The
symbolic world exists so that plans can be executed and judged on a CPU, in microseconds, without the
Unity build; ``docs/agentbench_world.md`` lists where it deviates from AI2-THOR and how faithfully it
reproduces the dataset's own goal states.
"""
