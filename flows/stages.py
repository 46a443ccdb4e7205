"""The registry of DVC stages, and ``dvc.yaml`` written from their declarations.

    python -m flows.stages                   # list the stages: inputs, outputs, code key
    python -m flows.stages --write-dvc-yaml  # regenerate dvc.yaml
    python -m flows.stages --check           # exit 1 when dvc.yaml differs from the declarations

Each stage module declares ``STAGE`` (``flows/_stage.py``; a module with two stages, ``STAGES``). A stage's
``deps`` are its declared inputs followed by the files of its code's import closure
(:mod:`embodied_safety.codekey`), so an edit re-runs exactly the stages whose code imports the edited file.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path
from typing import Any

from flows._stage import Plot, Stage

#: stage modules, in pipeline order
MODULES = (
    "household_suite", "evaluate_scripted", "bootstrap_actor", "rollouts", "branches", "safebranch", "baselines",
    "alfred_port", "report", "smollm2", "agentbench_eval", "shield_demos", "bc_policy", "shield_rollouts",
    "rubric_label", "calibrate", "rtd", "shield_ppo",
)
DVC_YAML = Path(__file__).resolve().parents[1] / "dvc.yaml"
HEADER = """\
# GENERATED from the stage declarations (STAGE = Stage(...) in flows/<stage>.py): do not edit by hand.
#   python -m flows.stages --write-dvc-yaml   (docs/architecture.md, "Stages")
# deps = the stage's declared inputs + every repository file its code imports (embodied_safety.codekey).
"""


def stages() -> list[Stage]:
    """Every declared stage, in pipeline order."""
    out: list[Stage] = []
    for name in MODULES:
        module = importlib.import_module(f"flows.{name}")
        out += list(getattr(module, "STAGES", None) or [module.STAGE])
    return out


def stage(name: str) -> Stage:
    return next(s for s in stages() if s.name == name)


def dvc_spec(declared: list[Stage] | None = None) -> dict[str, Any]:
    declared = stages() if declared is None else declared
    spec: dict[str, Any] = {"stages": {s.name: s.dvc() for s in declared}}
    plots = [e for s in declared for p in s.plots for e in (p.dvc() if isinstance(p, Plot) else [p])]
    if plots:
        spec["plots"] = plots
    return spec


def dvc_yaml(declared: list[Stage] | None = None) -> str:
    import yaml

    body = yaml.safe_dump(dvc_spec(declared), sort_keys=False, default_flow_style=False, width=120)
    return HEADER + re.sub(r"\n(  \S)", r"\n\n\1", body)  # a blank line before each stage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write-dvc-yaml", action="store_true", help=f"write {DVC_YAML.name} from the declarations")
    group.add_argument("--check", action="store_true", help=f"exit 1 when {DVC_YAML.name} is not the generated one")
    args = parser.parse_args(argv)
    text = dvc_yaml()
    if args.write_dvc_yaml:
        DVC_YAML.write_text(text)
        print(f"wrote {DVC_YAML}")
        return 0
    if args.check:
        same = DVC_YAML.is_file() and DVC_YAML.read_text() == text
        print(f"{DVC_YAML.name} {'matches' if same else 'differs from'} the stage declarations"
              + ("" if same else "; run: python -m flows.stages --write-dvc-yaml"))
        return 0 if same else 1
    from embodied_safety.codekey import code_key

    for s in stages():
        print(f"{s.name:16s} code {code_key(*s.code_modules)}  in {list(s.inputs.values())}  "
              f"out {[o if isinstance(o, str) else o.path for o in s.outs]}  metrics {s.metrics}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
