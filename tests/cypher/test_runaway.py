"""Where a projection a model ran away in starts repeating itself."""

from __future__ import annotations

import pytest

from cypherturn.cypher import runaway_projection_end


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        (
            "MATCH (n) RETURN n.a AS a, n.b AS b, n.a AS a, n.b",
            "MATCH (n) RETURN n.a AS a, n.b AS b",
        ),
        ("MATCH (n) RETURN DISTINCT n.a, n.a, n.a", "MATCH (n) RETURN DISTINCT n.a"),
        (
            "MATCH (n) WHERE n.x STARTS WITH 'a' RETURN n.a, n.a, n",
            "MATCH (n) WHERE n.x STARTS WITH 'a' RETURN n.a",
        ),
        # commas inside a call or a list do not split items
        (
            "MATCH (n) RETURN coalesce(n.a, n.b) AS c, [n.a, n.b] AS l, coalesce(n.a, n.b) AS c, x",
            "MATCH (n) RETURN coalesce(n.a, n.b) AS c, [n.a, n.b] AS l",
        ),
        # the last projection is the one that ran away
        (
            "MATCH (n) WITH n, n.a AS a MATCH (m) RETURN m.x, m.y, m.x, m",
            "MATCH (n) WITH n, n.a AS a MATCH (m) RETURN m.x, m.y",
        ),
        # a repeat of a whole earlier item only; a repeat in the unfinished last item is not one
        ("MATCH (n) RETURN n.a, n.b, n.a", None),
        ("MATCH (n) RETURN n.a, n.b, n.c, n.d", None),
        ("MATCH (n) WHERE n.x IN ['a', 'a', 'a', 'a", None),
        ("MATCH (n)) RETURN n.a, n.a, n.a", None),
        ("", None),
        # a cut after the RETURN list, or a last projection that is a WITH: not read
        ("MATCH (n) RETURN n.name, n.age ORDER BY n.age, n.name, n.age", None),
        ("MATCH (n) RETURN n.a, n.b LIMIT 5, n.a, ", None),
        ("MATCH (n) WITH n.a AS a, n.b AS b, n.a AS a, ", None),
        ("MATCH (n) WHERE n.x STARTS WITH 'a' MATCH (n)-[:R]->(m), (n)-[:R]->(m), ", None),
    ],
)
def test_runaway_projection_end(query: str, kept: str | None) -> None:
    end = runaway_projection_end(query)
    assert (None if end is None else query[:end]) == kept
