"""Run ``transformers serve`` on loopback for one model dir, offline, for as long as a ``with`` block lasts.

The server is pinned to the dir (FORCE_MODEL), so requests must name the model as the same path
string that was passed here. ``/health`` answers once the model is loaded (FIELD_NOTES part 2 §1).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOG_TAIL_CHARS = 4000


class ServerError(RuntimeError):
    """``transformers serve`` exited or never became healthy; the message carries the tail of its log."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_command(model_dir: str | os.PathLike[str], port: int, continuous_batching: bool = False) -> list[str]:
    """The command line: the venv's ``transformers`` executable, CPU, loopback only."""
    exe = Path(sys.executable).parent / "transformers"
    cmd = [str(exe), "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
           "--log-level", "info"]
    return cmd + (["--continuous-batching"] if continuous_batching else [])


def _log_tail(path: Path) -> str:
    text = path.read_text(errors="replace") if path.is_file() else ""
    return text[-LOG_TAIL_CHARS:]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _wait_healthy(proc: subprocess.Popen[bytes], port: int, timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"transformers serve exited with code {proc.returncode} before /health answered; "
                              f"log tail:\n{_log_tail(log)}")
        if _healthy(port):
            return
        time.sleep(0.25)
    raise ServerError(f"transformers serve on port {port} not healthy after {timeout_s} s; log tail:\n{_log_tail(log)}")


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM the whole process group, SIGKILL it if it is still there after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace_s)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


@contextmanager
def serve_model(model_dir: str | os.PathLike[str], port: int | None = None, continuous_batching: bool = False,
                timeout_s: float = 120.0) -> Iterator[str]:
    """Yield the base URL ``http://127.0.0.1:P/v1`` of a healthy server; stop its process group on exit."""
    port = port or free_port()
    with tempfile.TemporaryDirectory(prefix="es-serve-") as tmp:
        log = Path(tmp) / "server.log"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(Path(tmp) / "hf_home")}
        with open(log, "wb") as fh:
            proc = subprocess.Popen(serve_command(model_dir, port, continuous_batching), stdout=fh,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                    start_new_session=True)
        try:
            _wait_healthy(proc, port, timeout_s, log)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            _stop(proc)
