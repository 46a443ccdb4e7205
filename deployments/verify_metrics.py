"""Compare every stage's metrics file in the workspace with the committed one (`make verify`).

The committed ``dvc.lock`` is made by ``make demo`` on one machine (the README names it). On the same CPU a fresh
clone reproduces it byte for byte; on another CPU vendor trained outputs differ in float bits (torch's kernels
round differently), and the small differences grow through training into different numbers. This command says how
far a run is from the committed numbers: a number matches when

    |run - committed| <= atol + rtol * |committed|

(defaults ``--atol 0.05 --rtol 0.1``: a rate may move by about five points, a count or a loss by a tenth), strings and
booleans must be equal, and every key must be present on both sides. It prints one line per metrics file (``same``:
byte-identical; ``within tolerance``: numbers differ, none beyond it; ``DIFFERS``: the keys beyond it, each with
both values) and exits 1 when any file differs beyond the tolerance or is missing.

    python deployments/verify_metrics.py [--rev HEAD] [--atol 0.05] [--rtol 0.1] [--root .]

The committed side is ``git show <rev>:<file>`` (metrics files are DVC outputs kept in git, ``cache: false``).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metrics_show import leaves, metrics_files


@dataclass
class FileReport:
    path: str
    status: str  # same | within | differs | missing | new
    changed: int = 0  # leaves that differ at all
    beyond: list[tuple[str, Any, Any]] = field(default_factory=list)  # (key, committed, run)
    max_abs: float = 0.0

    def line(self) -> str:
        if self.status == "same":
            return f"same              {self.path}"
        if self.status == "within":
            return f"within tolerance  {self.path}  ({self.changed} numbers differ, max |diff| {self.max_abs:.3g})"
        if self.status in ("missing", "new"):
            what = "not in the run" if self.status == "missing" else "not committed at this revision"
            return f"MISSING           {self.path}  ({what})"
        head = f"DIFFERS           {self.path}  ({len(self.beyond)} of {self.changed} changed values beyond tolerance)"
        rows = [f"    {k}: committed {_fmt(a)}, run {_fmt(b)}" for k, a, b in self.beyond]
        return "\n".join([head, *rows])


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else ("(absent)" if v is _ABSENT else json.dumps(v))


_ABSENT = object()


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def compare(path: str, committed: Any, run: Any, atol: float, rtol: float) -> FileReport:
    """One file's report: which leaves differ, and which of them beyond the tolerance."""
    a, b = dict(leaves("", committed)), dict(leaves("", run))
    report = FileReport(path, "same")
    for key in list(a) + [k for k in b if k not in a]:
        x, y = a.get(key, _ABSENT), b.get(key, _ABSENT)
        if x == y or (_is_number(x) and _is_number(y) and math.isnan(x) and math.isnan(y)):
            continue
        report.changed += 1
        if _is_number(x) and _is_number(y):
            diff = abs(float(y) - float(x))
            report.max_abs = max(report.max_abs, diff)
            if diff <= atol + rtol * abs(float(x)):
                continue
        report.beyond.append((key, x, y))
    report.status = "differs" if report.beyond else ("within" if report.changed else "same")
    return report


def committed_text(root: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def verify(root: Path, rev: str = "HEAD", atol: float = 0.05, rtol: float = 0.1) -> list[FileReport]:
    reports = []
    for f in metrics_files(root / "dvc.yaml"):
        path = f.as_posix()
        old = committed_text(root, rev, path)
        run = root / f
        if old is None or not run.is_file():
            reports.append(FileReport(path, "new" if old is None else "missing"))
            continue
        new = run.read_text()
        reports.append(FileReport(path, "same") if new == old else
                       compare(path, json.loads(old), json.loads(new), atol, rtol))
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD", help="the git revision holding the committed metrics (default HEAD)")
    parser.add_argument("--atol", type=float, default=0.05)
    parser.add_argument("--rtol", type=float, default=0.1)
    parser.add_argument("--root", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    reports = verify(args.root, args.rev, args.atol, args.rtol)
    for r in reports:
        print(r.line())
    bad = [r for r in reports if r.status in ("differs", "missing", "new")]
    counts = {s: sum(r.status == s for r in reports) for s in ("same", "within", "differs")}
    print(f"{len(reports)} metrics files against {args.rev} (atol {args.atol}, rtol {args.rtol}): {counts['same']} same, "
          f"{counts['within']} within tolerance, {len(bad)} beyond it or missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
