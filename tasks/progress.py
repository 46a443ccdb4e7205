"""Progress of a long loop as a Prefect progress artifact on the current flow / task run.

    bar = ProgressArtifact(len(calls), "rollout chunks")
    for ...:
        bar.advance()        # or bar.set(done)

Outside a Prefect run, or when the API cannot be reached, it does nothing (never fails the loop). Progress
bars on the terminal (tqdm, transformers, datasets) stay on the terminal: :func:`quiet_progress_bars`
turns them off when stderr is not a TTY (a DVC stage, a Prefect worker), and :func:`strip_carriage_returns`
keeps carriage-return bars out of Prefect's run logs.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Any


def _in_run() -> bool:
    try:
        from prefect.context import FlowRunContext, TaskRunContext

        return FlowRunContext.get() is not None or TaskRunContext.get() is not None
    except Exception:  # noqa: BLE001
        return False


def artifact_key(text: str) -> str:
    """A valid Prefect artifact key (lowercase letters, digits, dashes)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", text.lower())).strip("-") or "progress"


class ProgressArtifact:
    """A progress artifact (0-100 %) of ``total`` steps, updated as steps finish."""

    def __init__(self, total: int, description: str, key: str | None = None) -> None:
        self.total, self.done, self.description, self.id = max(int(total), 0), 0, description, None
        if not _in_run():
            return
        try:
            from prefect.artifacts import create_progress_artifact

            self.id = create_progress_artifact(0.0, key=artifact_key(key or description),
                                               description=f"{description}: 0/{self.total}")
        except Exception as e:  # noqa: BLE001 - progress is never worth failing a stage for
            logging.getLogger(__name__).debug("no progress artifact: %s", e)

    def set(self, done: int) -> None:
        self.done = done
        if self.id is None:
            return
        try:
            from prefect.artifacts import update_progress_artifact

            pct = 100.0 * done / self.total if self.total else 100.0
            update_progress_artifact(self.id, min(pct, 100.0), description=f"{self.description}: {done}/{self.total}")
        except Exception as e:  # noqa: BLE001
            logging.getLogger(__name__).debug("progress artifact not updated: %s", e)

    def advance(self, n: int = 1) -> None:
        self.set(self.done + n)


def quiet_progress_bars(stream: Any = None) -> bool:
    """Off: tqdm / transformers / datasets / hub progress bars when ``stream`` (stderr) is not a TTY."""
    stream = sys.stderr if stream is None else stream
    if getattr(stream, "isatty", lambda: False)():
        return False
    for var in ("TQDM_DISABLE", "HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(var, "1")
    return True


class _CarriageReturns(logging.Filter):
    """A record whose message has carriage-return bar frames keeps only its last frame (none if empty)."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        if "\r" not in msg:
            return True
        last = msg.rstrip("\r\n").rsplit("\r", 1)[-1].strip()
        record.msg, record.args = last, None
        return bool(last)


def strip_carriage_returns() -> None:
    """Install the filter on Prefect's run loggers (what ``log_prints`` writes to)."""
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _CarriageReturns) for f in log.filters):
            log.addFilter(_CarriageReturns())
