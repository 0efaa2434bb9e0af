"""Open a :class:`GraphEngine` from a URL (or from nothing: the embedded FalkorDB).

Accepted forms of ``url``:

* ``None``, ``"embedded"`` — the embedded FalkorDB on the default data directory
  (started, or reused when already running); ``"embedded:/some/dir"`` — on that
  directory.
* ``falkordb://[[user]:password@]host:port``, ``redis://...``, ``rediss://...``
  (TLS) — an existing FalkorDB server; without a password in the URL, the
  ``FALKORDB_PASSWORD`` environment variable is used when set.
* ``bolt://``, ``neo4j://`` and their ``+s`` / ``+ssc`` TLS variants —
  Neo4j over Bolt; credentials from the URL's userinfo, else from the
  ``NEO4J_USER`` / ``NEO4J_PASSWORD`` environment variables.

A ``#graph`` fragment names the graph when the ``graph`` argument is omitted,
which is how :attr:`GraphEngine.spec` strings (``falkordb://host:6379#pole``)
reopen the same engine.

Each URL scheme is an entry of a registry (:func:`register_engine_scheme`);
the forms above register themselves here, and a new engine adds its scheme the
same way.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import falkordb
import neo4j
import neo4j.exceptions
import redis

from cypherturn._registry import Registry
from cypherturn.errors import ConfigError, EngineConnectionError
from cypherturn.graph._embedded import EmbeddedFalkorDB, default_data_dir
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, GraphEngine
from cypherturn.graph._falkordb import FalkorDBEngine
from cypherturn.graph._neo4j import Neo4jEngine

__all__ = [
    "ENGINE_SCHEMES",
    "EngineOpener",
    "EngineOptions",
    "embedded_server",
    "open_engine",
    "register_engine_scheme",
]

_CONNECT_TIMEOUT_S = 5.0
_FALKORDB_SCHEMES = {
    "falkordb": "redis",
    "falkor": "redis",
    "redis": "redis",
    "rediss": "rediss",
    "falkordbs": "rediss",
    "falkors": "rediss",
}
_BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """What :func:`open_engine` passes every opener besides the URL and the graph.

    Attributes:
        data_dir: the embedded server's data directory (``None``: the default).
        timeout_s: default ``execute`` timeout, seconds.
        row_cap: default ``execute`` row cap.
    """

    data_dir: str | os.PathLike[str] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    row_cap: int = DEFAULT_ROW_CAP


EngineOpener = Callable[[str, str, EngineOptions], GraphEngine]
"""``opener(url, graph, options) -> GraphEngine``: ``url`` without its ``#graph`` fragment.

Raises ConfigError for a malformed URL and EngineConnectionError for a server it
cannot reach; the engine's ``spec`` should reopen it (without secrets).
"""

ENGINE_SCHEMES: Registry[EngineOpener] = Registry("graph engine URL scheme")
"""Every URL scheme :func:`open_engine` accepts, with its opener (``embedded`` included)."""


def register_engine_scheme(scheme: str, opener: EngineOpener, *, replace: bool = False) -> None:
    """Make :func:`open_engine` open ``scheme://...`` URLs with ``opener``.

    Args:
        scheme: the URL scheme, lower case (``falkordb``, ``bolt+s``, ...).
        opener: builds the engine (:data:`EngineOpener`).
        replace: allow replacing the opener of a registered scheme.

    Raises:
        ConfigError: the scheme is empty or not lower case, or taken and
            ``replace`` is false.
    """
    if scheme != scheme.lower():
        raise ConfigError(f"an engine URL scheme is lower case, not {scheme!r}")
    ENGINE_SCHEMES.register(scheme, opener, replace=replace)


_servers: dict[Path, EmbeddedFalkorDB] = {}
_servers_lock = threading.Lock()


def embedded_server(data_dir: str | os.PathLike[str] | None = None) -> EmbeddedFalkorDB:
    """The started embedded FalkorDB for a data directory, one per directory per process.

    Args:
        data_dir: the server's data directory (default
            :func:`~cypherturn.graph.default_data_dir`).

    Returns:
        The server, started by this process or reused from another one.

    Raises:
        EngineConnectionError: the server could not be started.
    """
    path = Path(data_dir if data_dir is not None else default_data_dir()).expanduser().resolve()
    with _servers_lock:
        server = _servers.get(path)
        if server is None:
            server = _servers[path] = EmbeddedFalkorDB(path)
        return server.start()


def _split_graph(url: str, graph: str | None) -> tuple[str, str]:
    base, _, fragment = url.partition("#")
    name = graph if graph is not None else unquote(fragment)
    if not name:
        raise ConfigError(f"no graph name given for {url!r} (pass graph=... or append #name)")
    return base, name


def _open_embedded(base: str, graph: str, options: EngineOptions) -> FalkorDBEngine:
    location = base[len("embedded:") :] if base.startswith("embedded:") else ""
    directory = (
        Path(location).expanduser()
        if location
        else (Path(options.data_dir) if options.data_dir is not None else None)
    )
    server = embedded_server(directory)
    spec = (
        "embedded"
        if server.data_dir == default_data_dir().resolve()
        else f"embedded:{server.data_dir}"
    ) + f"#{graph}"
    client = falkordb.FalkorDB(
        host=server.host,
        port=server.port,
        password=server.password,
        socket_connect_timeout=_CONNECT_TIMEOUT_S,
    )
    return FalkorDBEngine(
        client,
        graph,
        spec=spec,
        timeout_s=options.timeout_s,
        row_cap=options.row_cap,
        where=f"embedded server {server.host}:{server.port}",
    )


def _open_falkordb(base: str, graph: str, options: EngineOptions) -> FalkorDBEngine:
    parts = urlsplit(base)
    scheme = _FALKORDB_SCHEMES[parts.scheme]
    try:
        host, port = parts.hostname or "localhost", parts.port or 6379
    except ValueError as e:
        raise ConfigError(f"bad FalkorDB URL {base!r}: {e}") from e
    where = f"{host}:{port}"
    try:
        client = falkordb.FalkorDB(
            host=host,
            port=port,
            username=unquote(parts.username) if parts.username else None,
            password=(
                unquote(parts.password)
                if parts.password is not None
                else os.environ.get("FALKORDB_PASSWORD")
            ),
            ssl=scheme == "rediss",
            socket_connect_timeout=_CONNECT_TIMEOUT_S,
        )
        client.connection.ping()
    except redis.AuthenticationError as e:
        raise EngineConnectionError(f"FalkorDB at {where} refused the credentials: {e}") from e
    except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
        raise EngineConnectionError(f"FalkorDB at {where} is unreachable: {e}") from e
    except redis.ResponseError as e:
        raise EngineConnectionError(f"FalkorDB at {where} refused the connection: {e}") from e
    spec = f"{parts.scheme}://{where}#{graph}"
    return FalkorDBEngine(
        client, graph, spec=spec, timeout_s=options.timeout_s, row_cap=options.row_cap, where=where
    )


def _open_neo4j(base: str, graph: str, options: EngineOptions) -> Neo4jEngine:
    parts = urlsplit(base)
    try:
        host, port = parts.hostname or "localhost", parts.port or 7687
    except ValueError as e:
        raise ConfigError(f"bad Bolt URL {base!r}: {e}") from e
    user = unquote(parts.username) if parts.username else os.environ.get("NEO4J_USER", "neo4j")
    password = (
        unquote(parts.password) if parts.password is not None else os.environ.get("NEO4J_PASSWORD")
    )
    address = f"{parts.scheme}://{host}:{port}"
    auth = (user, password) if password is not None else None
    try:
        driver = neo4j.GraphDatabase.driver(
            address,
            auth=auth,
            connection_timeout=_CONNECT_TIMEOUT_S,
            max_transaction_retry_time=0,
        )
        driver.verify_connectivity()
    except neo4j.exceptions.AuthError as e:
        raise EngineConnectionError(f"Neo4j at {address} refused the credentials: {e}") from e
    except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError, OSError) as e:
        raise EngineConnectionError(f"Neo4j at {address} is unreachable: {e}") from e
    except ValueError as e:
        raise ConfigError(f"bad Bolt URL {base!r}: {e}") from e
    spec = f"{parts.scheme}://{user}@{host}:{port}#{graph}"
    return Neo4jEngine(
        driver, graph, spec=spec, timeout_s=options.timeout_s, row_cap=options.row_cap
    )


register_engine_scheme("embedded", _open_embedded)
for _scheme in _FALKORDB_SCHEMES:
    register_engine_scheme(_scheme, _open_falkordb)
for _scheme in _BOLT_SCHEMES:
    register_engine_scheme(_scheme, _open_neo4j)
_BUILT_IN_SCHEMES = frozenset(ENGINE_SCHEMES.names())


def open_engine(
    url: str | None,
    graph: str | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
) -> GraphEngine:
    """Open an engine on one graph.

    Args:
        url: ``None``/``"embedded"``/``"embedded:DIR"``, a ``falkordb://`` or
            ``redis://`` URL, a ``bolt://``/``neo4j://`` URL (see module doc), or
            a URL of a scheme added with :func:`register_engine_scheme`; a
            ``#graph`` fragment may name the graph.
        graph: the graph (FalkorDB key) or Neo4j database; overrides the fragment.
        data_dir: the embedded server's data directory (ignored for URLs).
        timeout_s: default ``execute`` timeout, seconds (default 120).
        row_cap: default ``execute`` row cap (default 10,000).

    Returns:
        A :class:`GraphEngine`; its ``spec`` reopens it without secrets.

    Raises:
        ConfigError: an unknown scheme, a malformed URL or no graph name.
        EngineConnectionError: the server is unreachable or refuses the
            credentials (after at most about 5 s), or the embedded server did
            not start.
    """
    text = (url or "embedded").strip()
    base, name = _split_graph(text, graph)
    # "embedded" alone has no "scheme:" part; "embedded:DIR" has one
    scheme = "embedded" if base == "embedded" else urlsplit(base).scheme.lower()
    if scheme not in ENGINE_SCHEMES:
        extra = [s for s in ENGINE_SCHEMES.names() if s not in _BUILT_IN_SCHEMES]
        raise ConfigError(
            f"unknown graph engine URL {url!r}: use 'embedded', falkordb://host:port, "
            "redis://host:port or bolt://host:port"
            + (f" (also registered: {', '.join(f'{s}://' for s in extra)})" if extra else "")
        )
    opener = ENGINE_SCHEMES.get(scheme)
    return opener(base, name, EngineOptions(data_dir, timeout_s, row_cap))
