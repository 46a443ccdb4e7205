"""Stage processes compute with a pinned number of intra-op threads, whatever the machine's core count."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, os, sys
from embodied_safety.threads import pin_stage_threads
early = "torch" in sys.modules
n = pin_stage_threads()
import torch
print(json.dumps({"n": n, "torch": torch.get_num_threads(), "env": os.environ["OMP_NUM_THREADS"], "early": early}))
"""


def probe(env_threads: str | None, import_torch_first: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if env_threads is not None:
        env["OMP_NUM_THREADS"] = env_threads
    code = ("import torch\n" if import_torch_first else "") + PROBE
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_unset_pins_the_stage_default_before_and_after_torch_is_imported():
    from embodied_safety.threads import STAGE_THREADS

    assert probe(None) == {"n": STAGE_THREADS, "torch": STAGE_THREADS, "env": str(STAGE_THREADS), "early": False}
    late = probe(None, import_torch_first=True)
    assert late["early"] and late["n"] == late["torch"] == STAGE_THREADS


def test_omp_num_threads_wins():
    assert probe("1") == {"n": 1, "torch": 1, "env": "1", "early": False}


def test_every_stage_entry_point_pins_threads():
    """``Stage.main`` (every ``python -m flows.<stage>``) calls the pin before anything else runs."""
    import inspect

    from flows._stage import Stage

    src = inspect.getsource(Stage.main)
    assert src.index("pin_stage_threads()") < src.index("parser.parse_args")


KERNELS = """
import json, sys
import torch
from embodied_safety.threads import pin_stage_threads
pin_stage_threads()
torch.manual_seed(0)
x = torch.randn(64, 64)
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "sum": float((x @ x).sum())}))
"""


def kernels(**env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR")}
    out = subprocess.run([sys.executable, "-c", KERNELS], env={**base, **env}, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_stages_compute_with_the_avx2_kernels_on_any_x86_machine():
    """torch picks AVX-512 kernels where it can, and they round differently from AVX2 ones: the pin makes an AVX-512
    machine compute what an AVX2 machine computes (set after torch is imported, before its first computation)."""
    import platform

    import pytest

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86 kernels")
    pinned = kernels()
    assert pinned["capability"] == "AVX2"
    assert kernels(ATEN_CPU_CAPABILITY="avx2") == pinned  # what an AVX2-only machine would run
    assert kernels(ATEN_CPU_CAPABILITY="default")["capability"] == "DEFAULT"  # the user's setting wins
