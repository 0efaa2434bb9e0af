"""An engine URL scheme added through the registry opens engines for open_engine and api.ask."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn import api
from cypherturn.errors import ConfigError
from cypherturn.graph import (
    ENGINE_SCHEMES,
    EmbeddedFalkorDB,
    EngineOptions,
    FalkorDBEngine,
    GraphEngine,
    open_engine,
    register_engine_scheme,
)
from cypherturn.models import ReplayChatModel


def test_a_registered_scheme_serves_open_engine_and_api_ask(
    embedded_server: EmbeddedFalkorDB, make_engine: Callable[..., GraphEngine]
) -> None:
    people = make_engine("scheme")
    people.write("CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'})")
    opened: list[tuple[str, str, EngineOptions]] = []

    def session_server(url: str, graph: str, options: EngineOptions) -> GraphEngine:
        """``session://`` names the test session's embedded server."""
        opened.append((url, graph, options))
        return FalkorDBEngine(
            embedded_server.client(),
            graph,
            spec=f"session://#{graph}",
            timeout_s=options.timeout_s,
            row_cap=options.row_cap,
        )

    with ENGINE_SCHEMES.registered("session", session_server):
        engine = open_engine(f"session://here#{people.graph}", row_cap=7)
        assert engine.spec == f"session://#{people.graph}"
        assert engine.execute("MATCH (p:Person) RETURN count(p) AS n").rows == [[2]]
        engine.close()
        assert opened[-1][0] == "session://here" and opened[-1][2].row_cap == 7

        model = ReplayChatModel(["MATCH (p:Person) RETURN p.name AS name ORDER BY name"])
        result = api.ask(
            "Who is there?", graph=people.graph, engine_url="session://", strategy="is", model=model
        )
        assert result.success and result.final_result is not None
        assert result.final_result.rows == [["Ada"], ["Alan"]]
        assert opened[-1][:2] == ("session://", people.graph)

        with pytest.raises(ConfigError, match=r"also registered: session://"):
            open_engine("ftp://nowhere", "g")
    with pytest.raises(ConfigError, match=r"unknown graph engine URL 'session://x'"):
        open_engine("session://x", "g")


def test_scheme_registration_is_checked() -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_engine_scheme("bolt", lambda url, graph, options: open_engine(None, graph))
    with pytest.raises(ConfigError, match="lower case"):
        register_engine_scheme("Mine", lambda url, graph, options: open_engine(None, graph))
    assert {"embedded", "falkordb", "redis", "rediss", "bolt", "neo4j+s"} <= set(
        ENGINE_SCHEMES.names()
    )
