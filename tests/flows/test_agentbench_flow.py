"""``python -m flows.agentbench_eval`` on a user's folder: metrics.json, resume from stored shards, and the LLM
judge against a real OpenAI-compatible server on loopback (down first: the shard fails and is retried later)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

SHARED = ROOT / "data" / "safeagentbench"  # the rows the repository ships
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not SHARED.is_dir(), reason="shared SafeAgentBench data not present")]
FILES = ("safe_detailed_1009.jsonl", "unsafe_detailed_1009.jsonl", "abstract_1009.jsonl", "long_horizon_1009.jsonl")


def partial_copy(dst: Path, n: int, broken: bool = False) -> Path:
    """The first ``n`` rows of each shared file (a user's partial folder), optionally with a broken line."""
    for name in FILES:
        lines = (SHARED / name).read_text().splitlines()[:n]
        if broken and name.startswith("unsafe"):
            lines.append('{"scene_name": "FloorPlan1", "instruction": 7}')
        (dst / "dataset").mkdir(parents=True, exist_ok=True)
        data = ("\n".join(lines) + "\n").encode()
        if broken and name.startswith("safe"):  # a line that is not UTF-8 (latin-1 bytes)
            data += '{"scene_name": "FloorPlan1", "instruction": "Put the caf\u00e9 mug away"}\n'.encode("latin-1")
        (dst / "dataset" / name).write_bytes(data)
    return dst


def cli(args: list[str], env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flows.agentbench_eval", *args], cwd=ROOT, env=env, check=check,
                          capture_output=True, text=True, timeout=600)


def test_cli_evaluates_a_partial_folder_and_resumes(tmp_path, flow_env):
    data = partial_copy(tmp_path / "data", 12, broken=True)
    out, store = tmp_path / "out", tmp_path / "store"
    args = ["--data-dir", str(data), "--planner", "reference", "--planner", "guard", "--out", str(out),
            "--store", str(store)]
    first = cli(args, flow_env)
    m = json.loads((out / "metrics.json").read_text())
    assert m["data"]["rows_loaded"] == {"safe_detailed": 12, "unsafe_detailed": 12, "abstract": 12, "long_horizon": 12}
    assert m["data"]["rows_read"] == {"safe_detailed": 13, "unsafe_detailed": 13, "abstract": 12, "long_horizon": 12}
    assert m["data"]["rows_rejected"] == 2
    rejected = {r["source"]: r for r in m["data"]["rejected"]}
    assert rejected["unsafe_detailed_1009.jsonl:13"]["field"] == "instruction"
    assert "not UTF-8" in rejected["safe_detailed_1009.jsonl:13"]["reason"]
    assert m["audit"]["rows"] == 48 and set(m["planners_audit_passing"]) == {"reference", "guard"}
    assert "## Data audit" in (out / "tables.md").read_text()
    assert "have no row" in (out / "tables.md").read_text()
    ref, guard = m["planners"]["reference"], m["planners"]["guard"]
    assert set(ref) == {"safe_detailed", "unsafe_detailed", "abstract"}  # no plans to replay on long-horizon
    assert set(guard) == set(ref)
    for key in ("rejection_rate", "execution_rate", "risk_rate_exec", "risk_rate_semantic.rule", "n_goal", "by_hazard"):
        assert key in ref["unsafe_detailed"]
    assert {"L1", "L2", "L3", "L4"} <= set(ref["abstract"]) and "success_semantic.rule" in ref["safe_detailed"]
    assert guard["unsafe_detailed"]["rejection_rate"] > ref["unsafe_detailed"]["rejection_rate"] == 0.0
    episodes = [json.loads(line) for line in (out / "guard" / "unsafe_detailed.jsonl").read_text().splitlines()]
    assert len(episodes) == 12 and all("rule" in e["verdicts"] for e in episodes)
    assert any(e["refused"] and e["reason"].startswith("guard[") for e in episodes)
    assert "| guard |" in (out / "tables.md").read_text()
    assert (out / "unsafe_by_hazard_rejection_rate.png").stat().st_size > 1000
    assert "(stored)" not in first.stdout + first.stderr
    again = cli(args, flow_env)  # a re-run (e.g. after a kill) loads the finished shards, duplicates nothing
    assert (again.stdout + again.stderr).count("(stored)") == 6
    assert json.loads((out / "metrics.json").read_text()) == m


def test_cli_audit_writes_the_audit_of_every_row(tmp_path, flow_env):
    data = partial_copy(tmp_path / "data", 10, broken=True)
    out = tmp_path / "audit"
    done = cli(["--audit", "--data-dir", str(data), "--out", str(out)], flow_env)
    lines = [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()]
    assert len(lines) == 40 and all({"task_id", "source", "findings", "passes"} <= set(a) for a in lines)
    summary = json.loads((out / "audit.json").read_text())
    assert summary["rows"] == 40 and "rows_per_kind" in summary
    for entry in summary["by_type"].values():  # the reference plans reach every goal the audit passes
        assert entry.get("goal_rate_passing") in (None, 1.0)
    assert "| finding |" in done.stdout and (out / "audit.md").is_file()


def test_llm_judge_endpoint_down_then_up(tmp_path, flow_env):
    """Endpoint down: every judged shard is retried, recorded as failed, and the run fails after all shards ran.
    Endpoint up (a real ``transformers serve`` on that port): the same command finishes and records the LLM
    verdicts (the tiny random model never writes a [[label]], so each is a recorded judge failure)."""
    pytest.importorskip("openai")
    from embodied_safety.actors.serve import free_port, serve_model
    from tests.flows.test_openai_backend import tiny_actor_dir

    data = partial_copy(tmp_path / "data", 2)
    out, store = tmp_path / "out", tmp_path / "store"
    port = free_port()
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["agentbench_eval"]["judge_actor"] = {"max_retries": 0, "timeout_s": 20, "max_new_tokens": 8}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    model = str(tiny_actor_dir(tmp_path / "tiny"))
    args = ["--params", str(tmp_path / "params.yaml"), "--data-dir", str(data), "--planner", "reference",
            "--judge", "rule", "--judge", "llm", "--judge-base-url", f"http://127.0.0.1:{port}/v1",
            "--judge-model", model, "--out", str(out), "--store", str(store)]
    down = cli(args, flow_env, check=False)
    assert down.returncode != 0 and "ShardsFailed" in down.stdout + down.stderr
    failed = [json.loads(p.read_text()) for p in (store / "failed").glob("*.json")]
    assert len(failed) == 3 and all("EndpointError" in f["error"] and f["attempts"] == 3 for f in failed)
    assert not out.exists()  # nothing half-written

    with serve_model(model, port=port, timeout_s=120):
        up = cli(args, flow_env)
    assert "ShardsFailed" not in up.stdout + up.stderr and not list((store / "failed").glob("*.json"))
    m = json.loads((out / "metrics.json").read_text())["planners"]["reference"]
    episodes = [json.loads(line) for line in (out / "reference" / "safe_detailed.jsonl").read_text().splitlines()]
    llm = [e["verdicts"]["llm"] for e in episodes]
    assert len(llm) == 2 and all(v["backend"] == "llm" and v["detail"] for v in llm)
    labelled = sum(v["label"] is not None for v in llm)
    assert m["safe_detailed"]["judge_failures.llm"] == 2 - labelled
    assert m["safe_detailed"]["judge_failures.rule"] == 0
