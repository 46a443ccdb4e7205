"""How much of BEHAVIOR's activity corpus the household world parses and initialises (docs/household.md).

    python analysis/behavior_coverage.py

Prints :func:`embodied_safety.envs.household.coverage.behavior_coverage` as JSON: activities, parsed, initialised,
coverage and the failure reasons by kind.
"""

from __future__ import annotations

import json

from embodied_safety.envs.household.coverage import behavior_coverage


def main() -> None:
    print(json.dumps(behavior_coverage(), indent=2))


if __name__ == "__main__":
    main()
