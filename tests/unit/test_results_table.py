"""The README's results table is generated from the committed metrics files (deployments/results_table.py)."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.helpers import load_script


def test_the_readme_results_block_is_the_generated_one():
    script = load_script("deployments/results_table.py")
    assert script.main(["--check", str(ROOT / "README.md")]) == 0, "run: make results-table"


def test_every_row_names_a_metrics_file_of_a_stage():
    script = load_script("deployments/results_table.py")
    from flows.stages import stages

    declared = {s.metrics.replace("${item}", "dubins") for s in stages() if s.metrics}
    assert {path for _, path, _ in script.ROWS} <= declared
