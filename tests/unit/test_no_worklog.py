"""Library code and user docs state what is and why, not when it was found: no work-log references.

A work-log reference is a numbered stop (``Stop 38``, ``stop 47``) or a Markdown heading that carries a date
(``## 2026-01-31 ...``). Measurements cite the doc they are described in, without the stop or the date.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tests.conftest import ROOT

STOP = re.compile(r"\b[Ss]top [0-9]+\b")
DATED_HEADING = re.compile(r"^\s*#.*\b20[0-9]{2}-[0-9]{2}-[0-9]{2}\b")
CODE_DIRS = ("src", "flows", "tasks")


def _hits(paths: Iterable[Path]) -> list[str]:
    """``path:line: text`` of every work-log reference in ``paths`` (in a .py file a dated heading is a comment)."""
    hits = []
    for path in paths:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if STOP.search(line) or DATED_HEADING.match(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    return hits


def _message(hits: list[str]) -> str:
    return f"{len(hits)} work-log reference(s); state what is and why instead:\n" + "\n".join(hits)


def test_no_worklog_in_code():
    paths = sorted(p for d in CODE_DIRS for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts)
    assert paths, "no .py files found under src/, flows/, tasks/"
    hits = _hits(paths)
    assert not hits, _message(hits)


def test_no_worklog_in_docs():
    """The reference pages under docs/ (CHANGELOG.md may name versions and is not checked)."""
    paths = sorted((ROOT / "docs").glob("*.md"))
    assert paths, "no .md files found under docs/"
    hits = _hits(paths)
    assert not hits, _message(hits)


def test_no_worklog_in_readme():
    hits = _hits([ROOT / "README.md"])
    assert not hits, _message(hits)
