import subprocess
import sys

HEAVY = ("prefect", "dvc", "mlflow", "trl", "peft", "mujoco", "torch", "transformers")


def test_import_embodied_safety_pulls_in_no_orchestration_or_training_library():
    code = (
        "import sys, embodied_safety, embodied_safety.envs.household.env, embodied_safety.evaluation.household_eval, "
        "embodied_safety.envs.household.suite.generate, embodied_safety.config, embodied_safety.manifest; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
