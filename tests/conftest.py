import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
# pytest-xdist workers share the cores: each gets cores // workers intra-op threads (torch's default, and the cap on
# every config's request: embodied_safety.threads), inherited by the stages they start. Two workers with two
# OpenMP threads each on 2 cores spin against each other (a critic test pair: 57 s instead of 16 s).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    os.environ.setdefault("OMP_NUM_THREADS",
                          str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))


def pytest_collection_modifyitems(config, items):
    """Slow (end-to-end) tests first, otherwise in collection order: under `--dist loadfile` the long files start
    while unit files remain to fill the other worker, instead of one of them running last, alone, on the one
    thread its worker has (OMP_NUM_THREADS above)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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


@pytest.fixture
def flow_env(venv_env, prefect_harness):
    """``venv_env`` pointed at the session's test Prefect server: a flow run in a subprocess (a CLI, a DVC stage)
    reports there instead of starting a temporary server of its own (20-50 s of start-up and migrations each)."""
    from prefect.settings import PREFECT_API_URL

    return {**venv_env, "PREFECT_API_URL": str(PREFECT_API_URL.value())}
