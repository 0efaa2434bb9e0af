"""Fixtures of the MCP server tests: a small graph on the session's embedded FalkorDB."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.graph import GraphEngine


@pytest.fixture
def town(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """Three people, two cities and a company, on a fresh graph."""
    engine = make_engine("mcp")
    engine.write(
        "CREATE (ada:Person {name: 'Ada Lovelace', born: 1815}),"
        " (alan:Person {name: 'Alan Turing', born: 1912}),"
        " (grace:Person {name: 'Grace Hopper', born: 1906}),"
        " (london:City {name: 'London'}), (ny:City {name: 'New York'}),"
        " (acme:Company {name: 'Acme', sector: 'Engineering'}),"
        " (ada)-[:LIVES_IN]->(london), (alan)-[:LIVES_IN]->(london),"
        " (grace)-[:LIVES_IN]->(ny), (grace)-[:WORKS_AT {since: 1944}]->(acme)"
    )
    return engine
