"""Thin Prefect task wrappers around ``embodied_safety`` library calls.

Retries, cache policies and tags live here only. Importing this package sets the environment
defaults every entry point needs before ``prefect`` is imported: no analytics, a project-local
``PREFECT_HOME`` (so runs never touch ``~/.prefect``), offline Hugging Face, no DVC or Ray usage stats.
"""

from __future__ import annotations

import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
for _key, _value in {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_HOME": str(_ROOT / ".prefect"),
    "DO_NOT_TRACK": "1",
    "DVC_NO_ANALYTICS": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "MPLBACKEND": "Agg",
    "RAY_USAGE_STATS_ENABLED": "0",
    # a stage run alone starts a temporary server; its first start migrates a new database, and on a loaded
    # 2-core machine that runs past Prefect's 20 s default (`make demo` shares one server: deployments/demo.sh)
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
}.items():
    os.environ.setdefault(_key, _value)
