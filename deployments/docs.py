"""Generated blocks in README.md and docs/*.md (`make docs`; `make docs CHECK=1` / a test checks them).

A block is written in the Markdown source as::

    <!-- generated:SOURCE -->
    ...replaced...
    <!-- end generated -->

where SOURCE is a committed result file rendered as Markdown (``reports/table2.md``, the report stage's tables, each
ending with the code key and input hashes it came from; ``results/<study>/reports/*.md``, a study's), or
``results-glance``, the README's table of headline numbers read from the stages' metrics files
(:mod:`results_table`). Every result number a user reads in the README and docs sits in such a block.

    python deployments/docs.py [--check] [FILE ...]     # default: README.md and docs/*.md
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import results_table

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"(<!-- generated:(?P<source>[^ ]+?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


def render(source: str, root: Path = ROOT) -> str:
    if source == "results-glance":
        return results_table.table(root)
    path = root / source
    if path.suffix != ".md" or not path.is_file():
        raise SystemExit(f"generated block source {source!r}: not a committed Markdown result file")
    text = path.read_text().strip()
    # inside a doc page the report's headings sit below the page's own: its title becomes bold text, the rest go
    # two levels down
    text = re.sub(r"^# (.+)$", r"**\1**", text, flags=re.M)
    return re.sub(r"^(#{2,4}) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", text, flags=re.M)


def regenerate(text: str, root: Path = ROOT) -> str:
    return BLOCK.sub(lambda m: f"{m.group(1)}{render(m.group('source'), root)}\n{m.group(4)}", text)


def targets(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a block differs from its source")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    stale = []
    for f in args.files or targets():
        text = f.read_text()
        new = regenerate(text)
        if new != text:
            stale.append(f)
            if not args.check:
                f.write_text(new)
    if args.check and stale:
        print("stale generated blocks in " + ", ".join(str(f) for f in stale) + ": run make docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
