"""``embodied-safety``: the project's command line (installed by ``pip install`` / ``make setup``).

    embodied-safety scorecard --model DIR|models:/name@alias | --base-url URL --model-name NAME --out OUT
    embodied-safety evaluate --tasks-dir DIR --policy golden|actor [--model ...] --out OUT

``scorecard``: any model on every benchmark, one safety scorecard (:mod:`flows.scorecard`, docs/scorecard.md);
``evaluate``: one IS-Bench-layout folder (:mod:`flows.evaluate_policy`). The pipeline itself runs with
``make demo`` / ``dvc repro``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

COMMANDS: dict[str, tuple[str, str]] = {
    "scorecard": ("flows.scorecard", "any model on every benchmark: one safety scorecard"),
    "evaluate": ("flows.evaluate_policy", "a policy or an actor on one IS-Bench-layout folder"),
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        width = max(map(len, COMMANDS))
        usage = "\n".join(f"  {name:{width}}  {about}" for name, (_, about) in COMMANDS.items())
        asked = args[:1] in (["-h"], ["--help"])
        unknown = f"embodied-safety: unknown command {args[0]!r}\n" if args and not asked else ""
        print(f"{unknown}usage: embodied-safety COMMAND [options]\n\ncommands:\n{usage}\n\n"
              "`embodied-safety COMMAND --help` for a command's options.", file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    import importlib

    command: Callable[[list[str]], int | None] = importlib.import_module(COMMANDS[args[0]][0]).main
    return int(command(args[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
