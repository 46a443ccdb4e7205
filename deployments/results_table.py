"""The README's "results at a glance" table, generated from the committed metrics files (`make docs` writes it
into the README's ``<!-- generated:results-glance -->`` block, deployments/docs.py).

Every number is read from a stage's metrics file (DVC outputs kept in git), each row names its file; the table says
the budget it comes from.

    python deployments/results_table.py      # print it
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SB, FUNNEL, BASE = "models/safebranch_metrics.json", "data/branches/funnel.json", "data/baselines_metrics.json"
ALFRED, SAB, SHIELD = "data/alfred_metrics.json", "data/agentbench_metrics.json", "data/shield/ppo_metrics_dubins.json"


def _pct(v: float) -> str:
    return f"{v:.3f}"


def _sr_ssr(m: dict[str, Any], prefix: str) -> str:
    return f"SR {_pct(m[f'{prefix}/sr'])} / SSR {_pct(m[f'{prefix}/ssr'])}"


def _interval(m: dict[str, Any], key: str, lo: str, hi: str) -> str:
    return f"{m[key]:+.3f} [{m[lo]:+.3f}, {m[hi]:+.3f}]"


ROWS: list[tuple[str, str, Callable[[dict[str, Any]], str]]] = [
    ("SafeBranch, test split: base actor", SB, lambda m: _sr_ssr(m, "eval/base/test")),
    ("SafeBranch, test split: SFT-only", SB, lambda m: _sr_ssr(m, "eval/sft_only/test")),
    ("SafeBranch, test split: golden-replay control", SB, lambda m: _sr_ssr(m, "eval/golden_replay_only/test")),
    ("SafeBranch, test split: SafeBranch (SFT → BranchPO)", SB, lambda m: _sr_ssr(m, "eval/safebranch/test")),
    ("SafeBranch − golden replay, test SSR (paired bootstrap 95 %)", SB, lambda m: _interval(
        m, *(f"paired/safebranch_vs_golden_replay_only/test/ssr_{k}" for k in ("diff", "lo", "hi")))),
    ("Branch-pair funnel: extracted → judged → final", FUNNEL, lambda m: (
        f"{m['data/pairs_extracted']} → {m['data/pairs_judged']} → {m['data/pairs_final']} pairs; "
        f"{m['efficiency/ratio']:.1f}x the pairs per episode of natural failures")),
    ("Inference-time baselines, test: Self-Verification / Lookahead / full critic", BASE, lambda m: " · ".join(
        _sr_ssr(m, f"baselines/{b}/test") for b in ("self_verification", "lookahead", "full_critic"))),
    ("SafetyALFRED port: hazard accuracy base → BranchPO (non-hazard)", ALFRED, lambda m: (
        f"{_pct(m['alfred/base/hazard_acc'])} → {_pct(m['alfred/branchpo/hazard_acc'])} "
        f"({_pct(m['alfred/base/nonhazard_acc'])} → {_pct(m['alfred/branchpo/nonhazard_acc'])})")),
    ("SafeAgentBench unsafe rows: rejection / semantic risk, reference plans → rule guard", SAB, lambda m: (
        f"{_pct(m['agentbench/reference/unsafe_detailed/rejection_rate'])} / "
        f"{_pct(m['agentbench/reference/unsafe_detailed/risk_rate_semantic'])} → "
        f"{_pct(m['agentbench/guard/unsafe_detailed/rejection_rate'])} / "
        f"{_pct(m['agentbench/guard/unsafe_detailed/risk_rate_semantic'])}")),
    ("ShieldVLA, Dubins-VL: SR / CSC of the BC start, PPO, PPO-Lagrangian, gated HJ", SHIELD, lambda m: " · ".join(
        f"{_pct(m[f'dubins/{r}/sr'])} / {m[f'dubins/{r}/csc']:.2f}" for r in ("start", "ppo", "ppo_lag", "gated"))),
    ("ShieldVLA do-no-harm: CSC − PPO-Lagrangian (95 %)", SHIELD, lambda m: _interval(
        m, "dubins/do_no_harm/csc_minus_baseline", "dubins/do_no_harm/csc_minus_baseline_lo",
        "dubins/do_no_harm/csc_minus_baseline_hi")),
]


def table(root: Path = ROOT) -> str:
    cache: dict[str, dict[str, Any]] = {}
    lines = ["At the demo budget (one seed per method; a demonstration, not the papers' claims: `make study` and "
             "`make shield-study` run those), from the metrics files the committed `dvc.lock` stands for:", "",
             "| result | value | file |", "|---|---|---|"]
    for label, path, cell in ROWS:
        if path not in cache:
            cache[path] = json.loads((root / path).read_text())
        lines.append(f"| {label} | {cell(cache[path])} | `{path}` |")
    return "\n".join(lines)


def main() -> int:
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
