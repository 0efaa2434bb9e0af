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
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import falkordb
import neo4j
import neo4j.exceptions
import redis

from cypherturn.errors import ConfigError, EngineConnectionError
from cypherturn.graph._embedded import EmbeddedFalkorDB, default_data_dir
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, GraphEngine
from cypherturn.graph._falkordb import FalkorDBEngine
from cypherturn.graph._neo4j import Neo4jEngine

__all__ = ["embedded_server", "open_engine"]

_CONNECT_TIMEOUT_S = 5.0
_FALKORDB_SCHEMES = {
    "falkordb": "redis",
    "falkor": "redis",
    "redis": "redis",
    "rediss": "rediss",
    "falkordbs": "rediss",
    "falkors": "rediss",
}
_BOLT_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}

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


def _open_embedded(
    base: str, graph: str, data_dir: str | os.PathLike[str] | None, timeout_s: float, row_cap: int
) -> FalkorDBEngine:
    location = base[len("embedded:") :] if base.startswith("embedded:") else ""
    directory = (
        Path(location).expanduser()
        if location
        else (Path(data_dir) if data_dir is not None else None)
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
        timeout_s=timeout_s,
        row_cap=row_cap,
        where=f"embedded server {server.host}:{server.port}",
    )


def _open_falkordb(base: str, graph: str, timeout_s: float, row_cap: int) -> FalkorDBEngine:
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
        client, graph, spec=spec, timeout_s=timeout_s, row_cap=row_cap, where=where
    )


def _open_neo4j(base: str, graph: str, timeout_s: float, row_cap: int) -> Neo4jEngine:
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
    return Neo4jEngine(driver, graph, spec=spec, timeout_s=timeout_s, row_cap=row_cap)


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
            ``redis://`` URL, or a ``bolt://``/``neo4j://`` URL (see module doc);
            a ``#graph`` fragment may name the graph.
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
    if base == "embedded" or base.startswith("embedded:"):
        return _open_embedded(base, name, data_dir, timeout_s, row_cap)
    scheme = urlsplit(base).scheme.lower()
    if scheme in _FALKORDB_SCHEMES:
        return _open_falkordb(base, name, timeout_s, row_cap)
    if scheme in _BOLT_SCHEMES:
        return _open_neo4j(base, name, timeout_s, row_cap)
    raise ConfigError(
        f"unknown graph engine URL {url!r}: use 'embedded', falkordb://host:port, "
        "redis://host:port or bolt://host:port"
    )
