"""A small crime graph on the session's real engine, and its grounding index."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.grounding import GraphIndex, graph_index

CRIME_GRAPH = """
CREATE (ada:Person {name: 'Ada', surname: 'Lovelace', gender: 'F', age: 36}),
       (alan:Person {name: 'Alan', surname: 'Turing', gender: 'M', age: 41}),
       (grace:Person {name: 'Grace', surname: 'Hopper', gender: 'F', age: 50}),
       (c1:Crime {id: 'c1', type: 'Burglary', date: '2017-08-01'}),
       (c2:Crime {id: 'c2', type: 'Drugs', date: '2017-08-02'}),
       (c3:Crime {id: 'c3', type: 'Burglary', date: '2017-09-03'}),
       (o:Officer {name: 'Jane', rank: 'Sergeant'}),
       (l:Location {address: '1 Piccadilly'}),
       (ada)-[:PARTY_TO]->(c1), (alan)-[:PARTY_TO]->(c2), (grace)-[:PARTY_TO]->(c3),
       (ada)-[:KNOWS {since: 2001}]->(alan),
       (c1)-[:INVESTIGATED_BY]->(o), (c2)-[:INVESTIGATED_BY]->(o),
       (c1)-[:OCCURRED_AT]->(l), (c3)-[:OCCURRED_AT]->(l)
"""


@pytest.fixture
def crime(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """A fresh graph holding :data:`CRIME_GRAPH`."""
    engine = make_engine("crime")
    engine.write(CRIME_GRAPH)
    return engine


@pytest.fixture
def index(crime: GraphEngine) -> GraphIndex:
    """The grounding index of the crime graph."""
    return graph_index(crime)
