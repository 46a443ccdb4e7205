"""Prefect flows, one module per DVC stage (``python -m flows.<stage>``).

Imports go one way: flows -> tasks -> embodied_safety. ``import tasks`` first sets the
environment defaults (analytics off, project-local PREFECT_HOME) before prefect loads.
"""

import tasks  # noqa: F401
