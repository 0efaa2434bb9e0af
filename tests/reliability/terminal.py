"""A ``cypherturn`` command on a pseudo-terminal, as a user runs it: output as it comes, keys, signals.

Shared by the signal tests (``tests/reliability/test_signals.py``) and
``benchmarks/bench_reliability.py``. The child's controlling terminal is the
pty, so typing Ctrl-C (``\\x03``) makes the terminal send SIGINT to it, as a
real terminal does; rich sees a terminal and streams the model's tokens.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from faults import servers_under

__all__ = ["Stopped", "Terminal", "leftover_processes"]


@dataclass
class Stopped:
    """How a command ended after a stop was sent.

    Attributes:
        exit: its exit status (a signal's death is ``128 + signum``, as a shell shows it).
        seconds: from the stop to its exit, seconds.
        output: everything it wrote to the terminal.
    """

    exit: int
    seconds: float
    output: str


class Terminal:
    """``python -m cypherturn ARGS`` on a new pseudo-terminal.

    Args:
        args: the command's arguments.
        env: its environment.
        columns: the terminal's width.
    """

    def __init__(self, args: list[str], env: dict[str, str], columns: int = 200) -> None:
        command = [sys.executable, "-m", "cypherturn", *args]
        environment = {**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": "60"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once (nothing else is safe after a fork)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(sys.executable, command, environment)
        self.pid, self.fd = pid, fd
        self._output = b""
        self._status: int | None = None

    @property
    def output(self) -> str:
        """What the command wrote so far."""
        return self._output.decode("utf-8", errors="replace")

    def _read(self, timeout_s: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if ready:
            try:
                self._output += os.read(self.fd, 65536)
            except OSError:  # EIO: the child closed the terminal (it exited)
                time.sleep(timeout_s)

    def wait_for(self, text: str, timeout_s: float = 180.0) -> str:
        """Read until ``text`` has appeared; return the output.

        Raises:
            AssertionError: it did not appear in time, or the command exited first.
        """
        deadline = time.monotonic() + timeout_s
        while text not in self.output:
            if time.monotonic() > deadline or self._exited():
                raise AssertionError(f"{text!r} not shown (exit {self._status}):\n{self.output}")
            self._read(0.1)
        return self.output

    def type(self, line: str) -> None:
        """Type ``line`` and Enter."""
        os.write(self.fd, line.encode() + b"\r")

    def ctrl_c(self) -> float:
        """Press Ctrl-C; return when (``time.monotonic()``)."""
        os.write(self.fd, b"\x03")
        return time.monotonic()

    def send(self, signum: int) -> float:
        """Send ``signum`` to the command; return when."""
        os.kill(self.pid, signum)
        return time.monotonic()

    def _exited(self) -> bool:
        if self._status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._status = os.waitstatus_to_exitcode(status)
        return self._status is not None

    def stopped(self, since: float, timeout_s: float = 60.0) -> Stopped:
        """Wait for the command to exit after a stop sent at ``since``.

        Raises:
            AssertionError: it still ran ``timeout_s`` after the stop (it is then killed).
        """
        while not self._exited():
            if time.monotonic() - since > timeout_s:
                self.close()
                raise AssertionError(f"still running {timeout_s} s after the stop:\n{self.output}")
            self._read(0.01)
        seconds = time.monotonic() - since
        self._read(0.05)
        status = self._status
        assert status is not None
        return Stopped(128 - status if status < 0 else status, seconds, self.output)

    def close(self) -> None:
        """Kill the command if it still runs; close the terminal (once)."""
        if not self._exited():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self._status = -signal.SIGKILL
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def leftover_processes(home: Path, settle_s: float = 5.0) -> list[str]:
    """Processes still running for a ``CYPHERTURN_HOME``: embedded servers and their watchdogs.

    A server is found by its data directory (:func:`faults.servers_under`), a
    watchdog or anything else by ``home`` in its command line.
    """
    root = str(home.resolve())
    deadline = time.monotonic() + settle_s
    while True:
        found = [f"redis-server {s.pid}" for s in servers_under(home, settle_s=0)]
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if root in command:
                found.append(f"{entry.name}: {command.strip()}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)
