"""How many intra-op threads torch uses: what a config asks for, capped by ``OMP_NUM_THREADS`` when it is set; and
which CPU kernels a stage computes with (:data:`CPU_KERNELS`).

Configs ask for threads (``bc_policy.threads: 2``, ``PPOConfig.threads``, ...) because one stage on a 2-core
machine is fastest with both. When several processes share the cores (pytest-xdist workers, shards on a local
cluster), each with 2 intra-op threads, OpenMP's spinning threads oversubscribe them: two concurrent copies of a
critic-training test took 57 s instead of 16 s with one thread each. Setting ``OMP_NUM_THREADS`` caps every
request here, as it caps torch's default.
"""

from __future__ import annotations

import os
import sys

#: intra-op threads of every pipeline stage when OMP_NUM_THREADS is unset. One: the pipeline's models are small
#: (a 0.4 M-parameter actor, a small CNN policy) and keep a second thread mostly waiting, so `make demo` runs the DAG's
#: independent parts side by side, one single-thread lane per core (deployments/parallel_repro.py). torch's float sums
#: depend on the thread count, so a stage's outputs are byte-identical only at the same count: the committed dvc.lock
#: is made with this one.
STAGE_THREADS = 1


#: the CPU kernel family of every stage. torch dispatches to AVX-512 kernels where the CPU has them and to AVX2 ones
#: elsewhere, and the two round differently: a lock made on one x86 machine is not reproducible on another
#: (measured: on an AVX-512 machine every trained output differed from the committed lock, identical code and
#: thread count).
#: AVX2 is the common denominator of the x86 machines we run on. Read lazily by torch (ATen at its first kernel
#: dispatch, oneDNN and MKL at their first call), so they take effect when set before the stage computes anything.
CPU_KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}


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


def pin_stage_threads() -> int:
    """Pin this stage process (and what it spawns) to ``OMP_NUM_THREADS`` or :data:`STAGE_THREADS` threads,
    whatever the machine's core count: exports ``OMP_NUM_THREADS`` (torch reads it on import) and sets torch's
    count when torch is already imported; exports :data:`CPU_KERNELS` (call it before the first torch computation).
    Returns the count."""
    n = thread_cap() or STAGE_THREADS
    os.environ["OMP_NUM_THREADS"] = str(n)
    for name, value in CPU_KERNELS.items():  # a value set by the user wins
        os.environ.setdefault(name, value)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)
    return n
