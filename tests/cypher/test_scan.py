"""The scanner: the keyword tables, bracket depths and the positions of a WHERE's filters."""

from __future__ import annotations

import pytest

from cypherturn.cypher import (
    CLAUSE_KEYWORDS,
    CLAUSE_STARTS,
    READING_KEYWORDS,
    RESERVED_WORDS,
    WRITE_CLAUSES,
    ClauseRole,
    bracket_depths,
    clause_before,
    in_top_level_where,
    keyword_at,
    predicate_bounds,
    tokenize,
    where_of,
)
from cypherturn.errors import CypherParseError


def test_the_sets_are_read_off_the_one_table() -> None:
    assert {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH"} == WRITE_CLAUSES
    assert "WHERE" not in CLAUSE_STARTS and "UNION" not in CLAUSE_STARTS
    assert READING_KEYWORDS.isdisjoint(WRITE_CLAUSES)
    assert set(CLAUSE_KEYWORDS) <= RESERVED_WORDS
    assert {row.role for row in CLAUSE_KEYWORDS.values()} == set(ClauseRole)


def test_bracket_depths_strict_and_lenient() -> None:
    tokens = tokenize("RETURN [1, (2)]")
    assert bracket_depths(tokens) == [0, 0, 1, 1, 1, 2, 2, 1]
    with pytest.raises(CypherParseError):
        bracket_depths(tokenize("RETURN (1]"))
    with pytest.raises(CypherParseError):
        bracket_depths(tokenize("RETURN (1"))
    assert bracket_depths(tokenize("RETURN (1"), open_at_end=True) == [0, 0, 1]
    assert bracket_depths(tokenize("RETURN 1) + 2"), lenient=True) == [0, 0, 0, -1, -1]


@pytest.mark.parametrize(
    ("query", "marker", "filters"),
    [
        ("MATCH (n) WHERE n.x = 1 RETURN n", "n.x", True),
        ("MATCH (n) WHERE (n.y = 2 OR (n.x = 1)) RETURN n", "n.x", True),
        ("MATCH (n) WHERE NOT (n.x = 1) RETURN n", "n.x", True),
        ("MATCH (n) RETURN n.x = 1 AS f", "n.x", False),
        ("MATCH (n) RETURN (n.x = 1) AS f", "n.x", False),
        ("MATCH (n) WHERE any(v IN [1] WHERE n.x = v) RETURN n", "n.x", False),
        ("MATCH (n) WHERE size([n.x]) > 0 RETURN n", "n.x", False),
        ("MATCH (n) WHERE n.a = 1 WITH n MATCH (m) WHERE m.x = 1 RETURN m", "m.x", True),
        ("MATCH (n) WITH n WHERE n.x = 1 RETURN n", "n.x", True),
        ("MATCH (n) WHERE n.a = 1 RETURN n.x", "n.x", False),
        ("MATCH (n) WHERE n.where = 1 RETURN n.x", "n.x", False),
    ],
)
def test_in_top_level_where(query: str, marker: str, filters: bool) -> None:
    tokens = tokenize(query)
    depths = bracket_depths(tokens)
    assert in_top_level_where(tokens, depths, query.index(marker)) is filters


def test_where_of_spans_the_whole_where() -> None:
    query = "MATCH (n) WHERE n.x = 1 AND (n.y = 2) RETURN n"
    tokens = tokenize(query)
    depths = bracket_depths(tokens)
    where, end = where_of(tokens, depths, 5) or (0, 0)
    assert tokens[where].text == "WHERE" and tokens[end].text == "RETURN"
    assert clause_before(tokens, depths, end) == where


def test_keyword_at_tells_keywords_from_names_spelt_like_them() -> None:
    tokens = tokenize("MATCH (n:Order) RETURN n.limit AS order LIMIT 1")
    keywords = [t.text for i, t in enumerate(tokens) if keyword_at(tokens, i)]
    assert keywords == ["MATCH", "n", "RETURN", "n", "AS", "LIMIT"]  # not Order, limit, order


@pytest.mark.parametrize(
    ("query", "predicate", "whole"),
    [
        ("MATCH (n) WHERE n.x = 1 RETURN n", "n.x = 1", True),
        ("MATCH (n) WHERE n.y = 2 AND n.x = 1 RETURN n", "n.x = 1", True),
        ("MATCH (n) WHERE (n.x = 1) RETURN n", "n.x = 1", True),
        ("MATCH (n) WHERE n.x = 1", "n.x = 1", True),
        ("MATCH (n) WHERE n.x = 1 UNWIND [1] AS k RETURN k", "n.x = 1", True),
        ("MATCH (n) WHERE n.x = 1 + 2 RETURN n", "n.x = 1", False),
        ("MATCH (n) RETURN n.x = 1 AS f", "n.x = 1", False),
    ],
)
def test_predicate_bounds(query: str, predicate: str, whole: bool) -> None:
    start = query.index(predicate)
    assert predicate_bounds(query, start, start + len(predicate)) is whole
