"""Every result number in README.md and docs/*.md sits in a block generated from a committed result file
(deployments/docs.py, `make docs`): the committed blocks are the generated ones."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def docs():
    sys.path.insert(0, str(ROOT / "deployments"))  # docs.py imports its sibling results_table
    import docs

    return docs


def test_every_generated_block_is_up_to_date(docs):
    assert docs.main(["--check"]) == 0, "run: make docs"
    assert "<!-- generated:results-glance -->" in (ROOT / "README.md").read_text()


def test_a_block_is_replaced_by_its_source_and_a_bad_source_is_named(docs, tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "t.md").write_text("# Table 9\n\n| a |\n|---|\n| 1 |\n")
    page = "intro\n<!-- generated:reports/t.md -->\nstale 0.5\n<!-- end generated -->\nafter\n"
    assert docs.regenerate(page, tmp_path) == ("intro\n<!-- generated:reports/t.md -->\n**Table 9**\n\n| a |\n|---|\n"
                                               "| 1 |\n<!-- end generated -->\nafter\n")
    with pytest.raises(SystemExit, match="reports/missing.md"):
        docs.regenerate("<!-- generated:reports/missing.md -->\n<!-- end generated -->", tmp_path)


def test_every_glance_row_names_a_metrics_file_of_a_stage(docs):
    from flows.stages import stages

    declared = {s.metrics.replace("${item}", "dubins") for s in stages() if s.metrics}
    assert {path for _, path, _ in docs.results_table.ROWS} <= declared
