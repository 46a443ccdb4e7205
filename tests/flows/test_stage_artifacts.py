"""A stage run through its envelope publishes its results on its flow run: a markdown artifact (headline
table) and a table artifact (key numbers); carriage-return bars stay out of the run logs."""

from __future__ import annotations

import json
import logging

import yaml


def test_household_suite_publishes_artifacts(prefect_harness, tmp_path, monkeypatch):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    from flows.household_suite import STAGE

    monkeypatch.chdir(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"household_suite": {
        "seed": 0, "per_template": 3, "n_dev": 1, "n_test": 1, "contrast_every": 4, "taskshift_per_target": 1,
        "behavior_coverage": False}}))
    STAGE.main(["--params", str(params)])
    assert (tmp_path / "data/household/metrics.json").is_file()
    with get_client(sync_client=True) as client:
        # The server is shared by the whole session: other runs of this stage published under the same keys,
        # so take the newest version of each key (the one this run wrote).
        arts: dict = {}
        for a in client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["household-suite-results", "household-suite-metrics"])),
                sort=ArtifactSort.CREATED_DESC):
            arts.setdefault(a.key, a)
        assert set(arts) == {"household-suite-results", "household-suite-metrics"}
        md, table = arts["household-suite-results"], arts["household-suite-metrics"]
        assert md.type == "markdown" and "data/tasks_total" in md.data and "| metric | value |" in md.data
        rows = json.loads(table.data) if isinstance(table.data, str) else table.data
        metrics = json.loads((tmp_path / "data/household/metrics.json").read_text())
        assert {r["metric"]: r["value"] for r in rows}["data/tasks_total"] == metrics["data/tasks_total"]
        assert md.flow_run_id is not None and md.flow_run_id == table.flow_run_id
        run = client.read_flow_run(md.flow_run_id)
        assert run.state.is_completed()


def test_carriage_return_bars_keep_last_frame():
    from tasks.progress import _CarriageReturns

    f = _CarriageReturns()
    rec = logging.LogRecord("prefect.flow_runs", logging.INFO, "", 0, "10%|#  |\r50%|##  |\r100%|###|", None, None)
    assert f.filter(rec) and rec.getMessage() == "100%|###|"
    rec = logging.LogRecord("prefect.flow_runs", logging.INFO, "", 0, "\r\r", None, None)
    assert not f.filter(rec)


def test_progress_artifact_outside_a_run_is_a_no_op():
    from tasks.progress import ProgressArtifact

    bar = ProgressArtifact(3, "chunks")
    bar.advance()
    assert bar.id is None and bar.done == 1
