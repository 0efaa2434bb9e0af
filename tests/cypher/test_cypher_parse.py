"""The clause-level parser: branches, clauses, pattern parts, projection items, ORDER BY."""

from __future__ import annotations

import pytest

from cypherturn.cypher import MatchClause, OtherClause, Projection, output_order, parse_query
from cypherturn.errors import CypherParseError


def test_clauses_and_optional_match() -> None:
    q = parse_query(
        "MATCH (a)-->(b) WHERE a.x = 1 OPTIONAL MATCH (b)-->(c) WITH a, c UNWIND [1] AS k RETURN a"
    )
    kinds = [type(c).__name__ for c in q.parts[0].clauses]
    assert kinds == ["MatchClause", "MatchClause", "Projection", "OtherClause", "Projection"]
    first, second = q.parts[0].clauses[0], q.parts[0].clauses[1]
    assert isinstance(first, MatchClause) and not first.optional
    assert isinstance(second, MatchClause) and second.optional


def test_starts_with_is_not_a_with_clause() -> None:
    q = parse_query("MATCH (n) WHERE n.name STARTS WITH 'A' OR n.name ENDS WITH 'z' RETURN n")
    assert [type(c).__name__ for c in q.parts[0].clauses] == ["MatchClause", "Projection"]


def test_keywords_inside_brackets_and_strings_are_not_clauses() -> None:
    q = parse_query(
        "MATCH (n) WHERE exists { MATCH (n)-->(m) RETURN m } "
        "RETURN [x IN n.tags WHERE x <> 'RETURN' | x] AS t, n.limit AS lim"
    )
    assert len(q.parts[0].clauses) == 2


def test_pattern_parts_and_path_variables() -> None:
    q = parse_query("MATCH p = (a)-[:R]->(b), (c:L {k: [1, 2]}), `q w` = (d) RETURN 1")
    match = q.parts[0].clauses[0]
    assert isinstance(match, MatchClause)
    assert [p.path_variable for p in match.parts] == ["p", None, "q w"]
    assert match.parts[1].text == "(c:L {k: [1, 2]})"


def test_projection_items_alias_distinct_aggregation() -> None:
    q = parse_query(
        "MATCH (n) RETURN DISTINCT n.name AS name, count(n) AS c, n.count, `x` ORDER BY c DESC SKIP 1 LIMIT 2"
    )
    ret = q.parts[0].final_projection
    assert ret is not None and ret.distinct and ret.skip and ret.limit
    assert [i.alias for i in ret.items] == ["name", "c", None, None]
    assert [i.aggregating for i in ret.items] == [False, True, False, False]
    assert [(k.expression, k.descending) for k in ret.order_by] == [("c", True)]
    assert ret.aggregating


def test_with_where_and_star() -> None:
    q = parse_query("MATCH (n) WITH *, n.x AS x WHERE x > 1 RETURN x")
    with_clause = q.parts[0].clauses[1]
    assert isinstance(with_clause, Projection)
    assert with_clause.star and [i.alias for i in with_clause.items] == ["x"]
    assert q.text[with_clause.items_end - 4 : with_clause.items_end] == "AS x"


def test_union_branches() -> None:
    q = parse_query(
        "MATCH (a) RETURN a.x AS x UNION ALL MATCH (b) RETURN b.x AS x UNION ALL RETURN 1 AS x;"
    )
    assert len(q.parts) == 3 and q.union_all == (True, True)


def test_call_subquery_and_writes_are_flagged() -> None:
    q = parse_query("CALL { MATCH (n) RETURN n } WITH n MERGE (n)-[:R]->(m) RETURN n")
    call, merge = q.parts[0].clauses[0], q.parts[0].clauses[2]
    assert isinstance(call, OtherClause) and call.subquery
    assert isinstance(merge, OtherClause) and merge.writes
    assert q.writes


@pytest.mark.parametrize(
    ("query", "ordered", "keys"),
    [
        ("MATCH (n) RETURN n.name", False, None),
        ("MATCH (n) RETURN n.name AS name ORDER BY name", True, (0,)),
        ("MATCH (n) RETURN n.age, n.name ORDER BY n.name, n.age DESC", True, (1, 0)),
        ("MATCH (n) RETURN n.name ORDER BY n.age", True, None),
        ("MATCH (n) WITH n ORDER BY n.age RETURN n.name", False, None),
        ("MATCH (n) RETURN n.x AS x ORDER BY x UNION MATCH (m) RETURN m.x AS x", False, None),
        ("MATCH (n) RETURN 'order by' AS s", False, None),
    ],
)
def test_output_order_comes_from_the_final_return(
    query: str, ordered: bool, keys: tuple[int, ...] | None
) -> None:
    order = output_order(query)
    assert (order.ordered, order.key_columns) == (ordered, keys)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "MATCH (n RETURN n",
        "MATCH (n)) RETURN n",
        "n.name",
        "MATCH RETURN 1",
        "RETURN",
        "RETURN 1 UNION",
    ],
)
def test_malformed_queries_raise(query: str) -> None:
    with pytest.raises(CypherParseError):
        parse_query(query)
