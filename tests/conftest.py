import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect server + DB for the few real flow tests (~20 s, shared)."""
    from prefect.testing.utilities import prefect_test_harness

    import tasks  # noqa: F401  (environment defaults before prefect loads)

    with prefect_test_harness(server_startup_timeout=60):
        yield


@pytest.fixture
def venv_env():
    """Environment for subprocesses: the venv's bin first on PATH (DVC stages call `python`)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    return env
