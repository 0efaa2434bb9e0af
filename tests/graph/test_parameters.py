"""Query parameters are checked like the query (issue 43): data-file cases, and probes on the engine.

FalkorDB receives parameters as a ``CYPHER name=value`` prefix of the query
text, so a crafted name or value could change what runs. Each case of
``parameter_cases.json`` is either refused with a message naming the parameter
(and the graph is unchanged) or sent, and then ``RETURN $name`` gives back the
value exactly as it was passed.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cypherturn.errors import QueryCostError, QueryError
from cypherturn.graph import GraphEngine, find_parameter_problem

CASES: list[dict[str, Any]] = json.loads(
    Path(__file__).with_name("parameter_cases.json").read_text(encoding="utf-8")
)["cases"]


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("params")
    engine.write("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})")
    return engine


def _counts(engine: GraphEngine) -> tuple[int, int]:
    return engine.node_count(), engine.relationship_count()


@pytest.mark.parametrize("case", CASES, ids=[c["about"][:60] for c in CASES])
def test_parameter_case(people: GraphEngine, case: dict[str, Any]) -> None:
    params, problem = case["params"], case["problem"]
    found = find_parameter_problem(params)
    if problem is None:
        assert found is None
        for name, value in params.items():
            rows = people.execute(f"RETURN ${name} AS v", params).rows
            assert rows == [[value]], name
        return
    assert found is not None and problem in found
    before = _counts(people)
    with pytest.raises(QueryError) as caught:
        people.execute("MATCH (n) RETURN count(n) AS c", params)
    assert problem in caught.value.engine_message
    # the trusted path writes the same prefix, so it refuses the same parameters
    with pytest.raises(QueryError):
        people.write("MATCH (n) RETURN count(n) AS c", params)
    assert _counts(people) == before


def _nested(depth: int) -> list[Any]:
    value: list[Any] = [1]
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (math.nan, "is nan; only finite numbers"),
        (math.inf, "is inf; only finite numbers"),
        ([1, -math.inf], "the number at $p[1] is -inf"),
        (dt.date(2024, 1, 1), "a date at $p cannot be sent"),
        (b"bytes", "a bytes at $p cannot be sent"),
        ({1: "x"}, "has a key of type int"),
        (_nested(40), "nested deeper than 32"),
    ],
)
def test_values_without_a_literal_are_named(value: Any, problem: str) -> None:
    found = find_parameter_problem({"p": value})
    assert found is not None and found.startswith("parameter 'p': ") and problem in found


def test_a_tuple_is_a_list(people: GraphEngine) -> None:
    assert people.execute("RETURN $t AS t", {"t": (1, "a")}).rows == [[[1, "a"]]]


def test_names_only_where_parameters_travel_apart() -> None:
    # Bolt carries parameters apart from the text: only the name rule applies.
    assert find_parameter_problem({"p": "a\x00b"}, values=False) is None
    assert find_parameter_problem({"a b": 1}, values=False) is not None


def test_cost_check_reads_numeric_parameters(people: GraphEngine) -> None:
    query = "UNWIND range(1, $n) AS x RETURN count(x)"
    started = time.monotonic()
    with pytest.raises(QueryCostError) as caught:
        people.execute(query, {"n": 60_000_000}, timeout_s=30)
    assert time.monotonic() - started < 0.5
    assert "range(1, $n) with $n = 60,000,000" in caught.value.engine_message
    with pytest.raises(QueryCostError):
        people.execute("RETURN size(range(1, $n * $k))", {"n": 100_000, "k": 1_000})
    assert people.execute(query, {"n": 1_000}).rows == [[1_000]]
    # a parameter that is no number leaves the bound unknown, as a property would
    with pytest.raises(QueryError):
        people.execute(query, {"n": "many"})


def test_a_query_of_its_own_may_not_bind_parameters(people: GraphEngine) -> None:
    # FalkorDB reads a leading CYPHER as the parameter prefix: $n would escape the cost check.
    started = time.monotonic()
    with pytest.raises(QueryError, match="may not start with CYPHER"):
        people.execute("CYPHER n=60000000 UNWIND range(1, $n) AS x RETURN count(x)", timeout_s=30)
    assert time.monotonic() - started < 0.5
    with pytest.raises(QueryError, match="may not start with CYPHER"):
        people.execute("cypher MATCH (n) RETURN n", {"n": 1})


def test_a_nul_in_the_query_text_is_refused(people: GraphEngine) -> None:
    with pytest.raises(QueryError, match="NUL character at offset 9"):
        people.execute("MATCH (n)\x00 DETACH DELETE n RETURN n")
    assert _counts(people) == (2, 1)
