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
