import ast
import subprocess
import sys
from pathlib import Path

HEAVY = ("prefect", "dvc", "mlflow", "trl", "peft", "mujoco", "torch", "transformers")


def test_import_embodied_safety_pulls_in_no_orchestration_or_training_library():
    code = (
        "import sys, embodied_safety, embodied_safety.envs.household.env, embodied_safety.evaluation.household_eval, "
        "embodied_safety.envs.household.suite.generate, embodied_safety.config.shared, embodied_safety.config.params, embodied_safety.manifest; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# Layers of embodied_safety point downward only (issue 19 item 5): the world knows nothing of how it is
# scored, actors know nothing of critics or evaluation, evaluation knows nothing of rollouts or training,
# ShieldVLA (paper 2) does not reach into the household actors, and ``llm`` (the one structured-ask module
# and chat client every LLM/VLM call goes through) sits below everything that asks a model.
SRC = Path(__file__).resolve().parents[2] / "src" / "embodied_safety"
FORBIDDEN = (
    ("envs", "evaluation"),
    ("actors", "critics"),
    ("actors", "evaluation"),
    ("evaluation", "rollout"),
    ("evaluation", "train"),
    ("shield", "actors"),
    ("llm", "actors"),
    ("llm", "critics"),
    ("llm", "shield"),
    ("llm", "agentbench"),
    ("llm", "envs"),
)
# Back-arrows still waiting for their fix, each with the module it imports. The test fails once an entry is
# gone from the code, so this list can only shrink.
PENDING: set[tuple[str, str]] = set()


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (function-level imports too), relative imports resolved."""
    package = ["embodied_safety", *path.relative_to(SRC).parent.parts]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # `from .. import evaluation`
    return found


def _back_arrows() -> set[tuple[str, str]]:
    arrows = set()
    for lower, upper in FORBIDDEN:
        for path in sorted((SRC / lower).rglob("*.py")):
            for module in _imports(path):
                if module == f"embodied_safety.{upper}" or module.startswith(f"embodied_safety.{upper}."):
                    arrows.add((path.relative_to(SRC).as_posix(), module))
    return arrows


def test_layers_import_downward_only():
    arrows = _back_arrows()
    unexpected = sorted(a for a in arrows if not any(a[0] == f and a[1].startswith(m) for f, m in PENDING))
    assert not unexpected, f"imports that run back up the layers: {unexpected}"
    stale = sorted(p for p in PENDING if not any(a[0] == p[0] and a[1].startswith(p[1]) for a in arrows))
    assert not stale, f"fixed back-arrows still listed in PENDING (remove them): {stale}"
