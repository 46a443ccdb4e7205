"""How many intra-op threads torch uses: what a config asks for, capped by ``OMP_NUM_THREADS`` when it is set.

Configs ask for threads (``bc_policy.threads: 2``, ``PPOConfig.threads``, ...) because one stage on a 2-core
machine is fastest with both. When several processes share the cores (pytest-xdist workers, shards on a local
cluster), each with 2 intra-op threads, OpenMP's spinning threads oversubscribe them: two concurrent copies of a
critic-training test took 57 s instead of 16 s with one thread each. Setting ``OMP_NUM_THREADS`` caps every
request here, as it caps torch's default.
"""

from __future__ import annotations

import os


def thread_cap() -> int | None:
    """``OMP_NUM_THREADS`` as a positive int, or None when unset or not a positive number."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def set_torch_threads(threads: int) -> int:
    """``torch.set_num_threads(min(threads, OMP_NUM_THREADS))``; returns the number set."""
    import torch

    cap = thread_cap()
    n = max(1, min(threads, cap) if cap else threads)
    torch.set_num_threads(n)
    return n
