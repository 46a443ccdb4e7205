"""How long a stage process takes to end: the interpreter's teardown against ``flows._stage.exit_without_teardown``.

Each child process imports what a stage process imports (``flows.safebranch``: torch, transformers, TRL, Prefect,
MLflow), builds a small torch model, and then either returns (the interpreter tears down every module) or calls
``exit_without_teardown``. The parent times each child from its last line to its exit (the child prints a
``time.time()`` stamp just before it ends) and end to end, interleaving the two ways ``--repeats`` times, and prints
medians and their ratio (no stage data, server or MLflow store needed).

    python benchmarks/stage_exit.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import sys, time
import flows.safebranch  # noqa: F401  the imports of a stage process
import torch
model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(8)])
model(torch.randn(64, 256)).sum().backward()
print(time.time(), flush=True)
if sys.argv[1] == "fast":
    from flows._stage import exit_without_teardown
    exit_without_teardown()
"""


def one(mode: str) -> tuple[float, float]:
    """(seconds from the child's last line to its exit, seconds end to end)."""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, mode], cwd=ROOT, capture_output=True, text=True, check=True)
    end = time.time()
    return end - float(out.stdout.split()[-1]), end - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    one("fast")  # warm the file cache
    runs: dict[str, list[tuple[float, float]]] = {"teardown": [], "fast": []}
    for _ in range(args.repeats):
        for mode in runs:
            runs[mode].append(one(mode))
    med = {m: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs)) for m, rs in runs.items()}
    for m, (tail, total) in med.items():
        print(f"{m:9s} end after last line {tail:5.2f} s   whole process {total:5.2f} s")
    print(f"ratio teardown / fast: end {med['teardown'][0] / med['fast'][0]:.1f}x, "
          f"whole process {med['teardown'][1] / med['fast'][1]:.2f}x")


if __name__ == "__main__":
    main()
