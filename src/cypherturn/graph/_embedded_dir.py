"""The data directory of an embedded FalkorDB server: its files, its lock and its users' leases.

One directory per server (created with mode 0700) holds the RDB snapshot, the
generated password (mode 0600), ``server.json`` (the running server's pid and
ports), the lock file that serialises start, reuse and stop, one lease file
per user under ``clients/`` (``<pid>-<owner id>``), and the server's log.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cypherturn.errors import ConfigError
from cypherturn.graph._watchdog import pid_alive

__all__ = [
    "LOG_FILE",
    "STATE_FILE",
    "default_data_dir",
    "directory_lock",
    "drop_lease",
    "live_leases",
    "load_or_create_password",
    "log_tail",
    "prepare_dir",
    "read_state",
    "remove_leases",
    "take_lease",
    "write_state",
]

STATE_FILE = "server.json"
"""The running server's pid, ports and watchdog, written by the process that started it."""

LOG_FILE = "server.log"
"""The server's own log (relative to the data directory, its working directory)."""

_PASSWORD_FILE = "password"
_LOCK_FILE = "server.lock"
_LEASE_DIR = "clients"
_STATE_VERSION = 1


def default_data_dir() -> Path:
    """Where the embedded server keeps its files by default.

    Returns:
        ``$CYPHERTURN_HOME/falkordb`` when ``CYPHERTURN_HOME`` is set, else
        ``~/.cache/cypherturn/falkordb``.
    """
    home = os.environ.get("CYPHERTURN_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".cache" / "cypherturn"
    return base / "falkordb"


def prepare_dir(data_dir: Path) -> None:
    """Create ``data_dir`` (mode 0700) when missing.

    Raises:
        ConfigError: it cannot be created.
    """
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot create FalkorDB data directory {data_dir}: {e}") from e


def load_or_create_password(data_dir: Path) -> str:
    """The server password kept in ``data_dir``, generated (mode 0600) on first use."""
    path = data_dir / _PASSWORD_FILE
    prepare_dir(data_dir)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    password = secrets.token_urlsafe(24)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(password)
    return password


@contextlib.contextmanager
def directory_lock(data_dir: Path) -> Iterator[None]:
    """Hold the directory's lock file (exclusive ``flock``) inside the block."""
    try:
        handle = open(data_dir / _LOCK_FILE, "a+b")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        # The data directory was removed: nobody else can coordinate on it either.
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _lease_path(data_dir: Path, owner: object) -> Path:
    return data_dir / _LEASE_DIR / f"{os.getpid()}-{id(owner):x}"


def take_lease(data_dir: Path, owner: object) -> None:
    """Record ``owner`` (of this process) as a user of the server."""
    (data_dir / _LEASE_DIR).mkdir(mode=0o700, exist_ok=True)
    _lease_path(data_dir, owner).touch()


def drop_lease(data_dir: Path, owner: object) -> None:
    """Remove ``owner``'s lease (nothing when it holds none)."""
    _lease_path(data_dir, owner).unlink(missing_ok=True)


def live_leases(data_dir: Path) -> list[Path]:
    """Leases of live processes; leases of dead ones are removed on the way."""
    live = []
    for lease in (data_dir / _LEASE_DIR).glob("*"):
        pid_text = lease.name.partition("-")[0]
        if pid_text.isdigit() and pid_alive(int(pid_text)):
            live.append(lease)
        else:
            lease.unlink(missing_ok=True)
    return live


def remove_leases(data_dir: Path) -> None:
    """Remove every lease (the server they named is stopped)."""
    for lease in (data_dir / _LEASE_DIR).glob("*"):
        lease.unlink(missing_ok=True)


def read_state(data_dir: Path) -> dict[str, Any] | None:
    """The content of ``server.json`` (``None``: missing or unreadable)."""
    try:
        state = json.loads((data_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return state if isinstance(state, dict) else None


def write_state(
    data_dir: Path, *, pid: int, port: int, bolt_port: int | None, watchdog_pid: int | None
) -> None:
    """Write ``server.json`` for the server just started (atomically: a temporary file, renamed)."""
    state = {
        "version": _STATE_VERSION,
        "pid": pid,
        "port": port,
        "bolt_port": bolt_port,
        "watchdog_pid": watchdog_pid,
        "started_at": time.time(),
    }
    tmp = data_dir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    tmp.replace(data_dir / STATE_FILE)


def log_tail(data_dir: Path, lines: int = 5) -> str:
    """The last ``lines`` lines of the server's log, joined with `` | `` (``""``: no log)."""
    try:
        text = (data_dir / LOG_FILE).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return " | ".join(line.strip() for line in text.splitlines()[-lines:])
