"""Supervisor of one embedded ``redis-server``: it never outlives its last user.

Run as a script (``python _watchdog.py DATA_DIR REDIS_SERVER CONFIG``), with
the standard library only, so it starts in milliseconds and imports nothing
of cypherturn. It starts ``redis-server`` as its child, with
``PR_SET_PDEATHSIG`` = SIGTERM so the server goes down with the watchdog
whatever kills it, and then polls every :data:`POLL_S` seconds:

* the server exited: the watchdog exits with its status;
* the data directory was removed (a temporary home cleaned up while the
  server ran): the server is stopped; it has nowhere to save;
* no lease file in ``clients/`` names a live process for two polls in a row
  (every user was SIGKILLed, or died without its ``atexit``): under the data
  directory's ``server.lock`` it checks once more, then stops the server (it
  saves its snapshot on the way down) and removes ``server.json``.

The redis configuration sets ``shutdown-on-sigterm force``, so a SIGTERM
stops the server even when its final save fails; SIGKILL follows after
:data:`STOP_TIMEOUT_S` seconds in any case. SIGTERM or SIGINT to the watchdog
stop the server the same way.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

POLL_S = 0.25
"""Seconds between two checks."""

STOP_TIMEOUT_S = 30.0
"""Seconds a stopping server may take to save before it is killed."""

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: receive SIGTERM when the watchdog dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def pid_alive(pid: int) -> bool:
    """True for a running process; a zombie (exited, not yet reaped by its parent) is dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return True
    return "State:\tZ" not in status


def live_lease_pids(data_dir: Path) -> list[int]:
    """Pids named by lease files ``clients/<pid>-<id>`` that are alive."""
    pids = []
    with contextlib.suppress(OSError):
        for lease in (data_dir / "clients").iterdir():
            text = lease.name.partition("-")[0]
            if text.isdigit() and pid_alive(int(text)):
                pids.append(int(text))
    return pids


def _stop(server: subprocess.Popen[bytes]) -> int:
    if server.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            server.send_signal(signal.SIGTERM)
        try:
            server.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return int(server.returncode or 0)


def _forget_state(data_dir: Path, pid: int) -> None:
    path = data_dir / "server.json"
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == pid:
            path.unlink()


def _no_users(data_dir: Path, server_pid: int) -> bool:
    """Under the start/stop lock: still no live lease (a starting user holds the lock)."""
    try:
        handle = open(data_dir / "server.lock", "a+b")  # noqa: SIM115 - held across the check
    except OSError:
        return True
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            if live_lease_pids(data_dir):
                return False
            _forget_state(data_dir, server_pid)
            return True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def main(argv: list[str]) -> int:
    """Start the server and supervise it; returns the server's exit status."""
    data_dir, binary, config = Path(argv[0]), argv[1], argv[2]
    server = subprocess.Popen(
        [binary, config],
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Safe here: the watchdog is single-threaded and the hook only calls prctl.
        preexec_fn=_die_with_parent,
    )
    stopping = False

    def _on_signal(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    idle_polls = 0
    while True:
        if server.poll() is not None:
            return int(server.returncode or 0)
        if stopping or not data_dir.is_dir():
            return _stop(server)
        idle_polls = 0 if live_lease_pids(data_dir) else idle_polls + 1
        if idle_polls >= 2 and _no_users(data_dir, server.pid):
            return _stop(server)
        time.sleep(POLL_S)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
