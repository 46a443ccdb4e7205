"""embodied-safety: SafeBranch, ShieldVLA and SafeAgentBench pipelines on embedded defaults.

Importing this package is cheap and pulls in no orchestration, tracking or training library
(prefect, dvc, mlflow, trl, peft, mujoco); those live in ``flows/`` and ``tasks/`` or are
imported inside the functions that need them.
"""

__version__ = "0.1.0"
