"""open_engine: URL forms, specs that reopen, and clear failures."""

from __future__ import annotations

import socket
import time

import pytest

from cypherturn.errors import ConfigError, DatasetError, EngineConnectionError
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, GraphEngine, open_engine


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_default_is_the_embedded_server(embedded_server: EmbeddedFalkorDB) -> None:
    engine = open_engine(None, "open_default")
    try:
        assert isinstance(engine, GraphEngine)
        assert engine.spec == "embedded#open_default"
        assert isinstance(engine, FalkorDBEngine)
        engine.write("CREATE (:X {v: 1})")
        # Same server as the session fixture: the data is visible through it.
        raw = (
            embedded_server.client().select_graph("open_default").ro_query("MATCH (x:X) RETURN x.v")
        )
        assert raw.result_set == [[1]]
        again = open_engine(engine.spec)
        assert again.execute("MATCH (x:X) RETURN x.v").rows == [[1]]
        again.close()
    finally:
        engine.drop()
        engine.close()


def test_falkordb_and_redis_urls(embedded_server: EmbeddedFalkorDB) -> None:
    for url in (embedded_server.url, embedded_server.url.replace("falkordb://", "redis://")):
        engine = open_engine(url + "#open_url")
        assert engine.graph == "open_url"
        assert embedded_server.password not in engine.spec
        assert isinstance(engine, FalkorDBEngine)
        with pytest.raises(DatasetError, match="does not exist"):
            engine.execute("RETURN 1 AS one")
        engine.ensure_graph()
        assert engine.execute("RETURN 1 AS one").rows == [[1]]
        engine.drop()
        engine.close()


def test_spec_reopens_with_password_from_environment(
    embedded_server: EmbeddedFalkorDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = open_engine(embedded_server.url, "open_env")
    engine.close()
    with pytest.raises(EngineConnectionError):
        open_engine(engine.spec)
    monkeypatch.setenv("FALKORDB_PASSWORD", embedded_server.password)
    reopened = open_engine(engine.spec)
    assert reopened.graph == "open_env"
    reopened.close()


def test_wrong_password_is_a_connection_error(embedded_server: EmbeddedFalkorDB) -> None:
    with pytest.raises(EngineConnectionError, match=r"FalkorDB at 127\.0\.0\.1"):
        open_engine(f"falkordb://:wrong@127.0.0.1:{embedded_server.port}", "g")


@pytest.mark.parametrize("scheme", ["falkordb", "bolt"])
def test_unreachable_server_fails_fast(scheme: str) -> None:
    started = time.monotonic()
    with pytest.raises(EngineConnectionError, match="unreachable"):
        open_engine(f"{scheme}://127.0.0.1:{_closed_port()}", "g")
    assert time.monotonic() - started < 15


@pytest.mark.parametrize(
    ("url", "graph"),
    [
        ("http://localhost:7474", "g"),
        ("falkordb://localhost:notaport", "g"),
        ("falkordb://localhost:6379", None),
        ("embedded", ""),
    ],
)
def test_bad_urls_are_config_errors(url: str, graph: str | None) -> None:
    with pytest.raises(ConfigError):
        open_engine(url, graph)
