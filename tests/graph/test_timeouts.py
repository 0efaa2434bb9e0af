"""The timeout promise, the refusal of visible runaway cost, and the row cap pushed into the query."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from cypherturn.errors import ErrorClass, QueryCostError, QueryTimeoutError
from cypherturn.graph import FalkorDBEngine, GraphEngine, timeout_promise_s
from cypherturn.graph._cost import MAX_LIST_VALUES, check_cost, literal_range_values
from cypherturn.graph._rowcap import push_row_cap


@pytest.fixture
def engine(make_engine: Callable[..., GraphEngine]) -> FalkorDBEngine:
    made = make_engine("timeouts")
    assert isinstance(made, FalkorDBEngine)
    return made


def test_promise_bound() -> None:
    assert timeout_promise_s(0.3) == pytest.approx(1.3)
    assert timeout_promise_s(1.0) == pytest.approx(2.0)
    assert timeout_promise_s(10.0) == pytest.approx(20.0)


@pytest.mark.parametrize(
    ("query", "values"),
    [
        ("UNWIND range(1, 100000000) AS x RETURN count(x)", [100_000_000]),
        ("RETURN range(0, 10^8, 2)", [50_000_001]),
        ("RETURN range(1, 1e3 * 1000)", [1_000_000]),
        ("RETURN range(10, 1)", [0]),
        ("RETURN range(1, 0x10)", [16]),
        ("RETURN range(1, -(-5))", [5]),
        ("RETURN range(1, n.x), n.range(1, 9), 'range(1, 99999999999)'", []),
        ("RETURN range(1, 2, 0)", []),
    ],
)
def test_literal_ranges_are_sized(query: str, values: list[int]) -> None:
    assert [size for _, size, _ in literal_range_values(query)] == values


def test_cost_refusal_names_the_call_and_counts_as_timeout() -> None:
    with pytest.raises(QueryCostError) as caught:
        check_cost("RETURN reduce(s = '', x IN range(1, 50000000) | s + 'x')")
    assert caught.value.error_class is ErrorClass.TIMEOUT
    assert isinstance(caught.value, QueryTimeoutError)
    assert "range(1, 50000000) (50,000,000 values)" in caught.value.engine_message
    with pytest.raises(QueryCostError):
        check_cost("RETURN [x IN range(1, 10000) | [y IN range(1, 10000) | y]]")
    # Ranges in separate clauses stream between them; the engine's timeout stops those.
    check_cost("UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*)")
    check_cost(f"RETURN size(range(1, {MAX_LIST_VALUES}))")


def test_refused_before_sending(engine: FalkorDBEngine) -> None:
    started = time.monotonic()
    with pytest.raises(QueryCostError):
        engine.execute("UNWIND range(1, 100000000) AS x RETURN count(x)", timeout_s=1.0)
    assert time.monotonic() - started < 0.5


def test_client_deadline_holds_when_the_engine_does_not_stop(engine: FalkorDBEngine) -> None:
    # Each range is small, but the nested reduce runs ~10^10 steps inside one expression,
    # where FalkorDB never checks its timeout.
    query = (
        "RETURN size([x IN range(1, 3000) | "
        "[y IN range(1, 3000) | reduce(s = 0, z IN range(1, y) | s + z)]])"
    )
    limit = 0.3
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError) as caught:
        engine.execute(query, timeout_s=limit)
    elapsed = time.monotonic() - started
    assert elapsed <= timeout_promise_s(limit)
    assert caught.value.error_class is ErrorClass.TIMEOUT
    assert "gave up waiting" in caught.value.engine_message
    # The engine still answers, at once, on a fresh connection.
    started = time.monotonic()
    assert engine.execute("RETURN 1").rows == [[1]]
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        ("MATCH (n) RETURN n", "MATCH (n) RETURN n LIMIT 11"),
        ("MATCH (n) RETURN n ORDER BY n.x DESC;", "MATCH (n) RETURN n ORDER BY n.x DESC LIMIT 11;"),
        ("MATCH (n) RETURN n SKIP 3 // note", "MATCH (n) RETURN n SKIP 3 LIMIT 11 // note"),
        ("MATCH (n) RETURN n LIMIT 50000", "MATCH (n) RETURN n LIMIT 11"),
        ("MATCH (n) RETURN n LIMIT 5", None),
        ("MATCH (n) RETURN n LIMIT $k", None),
        ("RETURN 1 UNION RETURN 2", None),
        ("CALL db.labels()", None),
        ("RETURN 1 MATCH (n)", None),
        ("MATCH (n) RETURN n /* unterminated", None),
    ],
)
def test_push_row_cap(query: str, sent: str | None) -> None:
    capped = push_row_cap(query, 10)
    assert capped.text == (sent or query)
    assert capped.rewritten is (sent is not None)


def test_row_cap_is_honoured_by_the_engine(engine: FalkorDBEngine) -> None:
    result = engine.execute("UNWIND range(1, 1000000) AS x RETURN x", row_cap=10)
    assert result.truncated and result.rows == [[x] for x in range(1, 11)]
    ordered = engine.execute("UNWIND range(1, 100) AS x RETURN x ORDER BY x DESC", row_cap=3)
    assert ordered.truncated and ordered.rows == [[100], [99], [98]]
    exact = engine.execute("UNWIND range(1, 10) AS x RETURN x", row_cap=10)
    assert not exact.truncated and exact.row_count == 10
    union = engine.execute("UNWIND range(1, 8) AS x RETURN x UNION RETURN 0 AS x", row_cap=5)
    assert union.truncated and union.row_count == 5


def test_error_feedback_quotes_the_query_as_written(engine: FalkorDBEngine) -> None:
    query = "MATCH (n) RETURN n +"
    with pytest.raises(Exception) as rewritten:
        engine.execute(query, row_cap=10)
    with pytest.raises(Exception) as direct:
        engine._run_trusted(query, {}, write=False)
    assert "LIMIT 11" not in str(rewritten.value)
    assert str(rewritten.value) == str(direct.value)
