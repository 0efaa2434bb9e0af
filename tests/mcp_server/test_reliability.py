"""The MCP server under load and abuse, driven by the official SDK's in-process client (issue 43).

A slow query of one client does not hold up another client's trivial reads;
every input is capped with a message naming the argument and the cap;
parameters are checked like the query (a crafted name or value cannot change
what runs, and the message names the parameter); a result too large for one
message is cut to the byte budget with a note; an engine-side write refusal
names what refused it. All on the real embedded FalkorDB.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from cypherturn.graph import GraphEngine
from cypherturn.mcp_server import GraphService, build_server
from cypherturn.models import CACHE_DIR_ENV, load_model

# 10^10 rows between two clauses: the cost check lets it through (the engine's timeout
# stops a stream of rows), so it runs until its timeout.
EXPENSIVE = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*) AS n"

BYSTANDER_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_cypher", {"query": "MATCH (p:Person) RETURN count(p) AS n"}),
    ("get_schema", {"labels": ["City"]}),
    ("search_values", {"key": "name", "text": "london"}),
]


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _counts(engine: GraphEngine) -> list[list[Any]]:
    return engine.execute(
        "MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r) AS rels"
    ).rows


def _in_process(
    engine: GraphEngine, check: Callable[[Client], Awaitable[None]], **options: Any
) -> None:
    service = GraphService(engine, **options)
    server = build_server(service, with_ask=False)

    async def main() -> None:
        async with Client(server) as client:
            await check(client)

    try:
        anyio.run(main)
    finally:
        service.close()


def test_a_slow_query_does_not_hold_up_another_clients_reads(town: GraphEngine) -> None:
    service = GraphService(town, timeout_s=10)
    server = build_server(service, with_ask=False)
    latencies: list[float] = []
    slow: list[tuple[CallToolResult, float]] = []

    async def main() -> None:
        async with Client(server) as first, Client(server) as second:

            async def run_slow() -> None:
                started = time.monotonic()
                result = await first.call_tool("read_cypher", {"query": EXPENSIVE, "timeout_s": 3})
                slow.append((result, time.monotonic() - started))

            async with anyio.create_task_group() as group:
                group.start_soon(run_slow)
                await anyio.sleep(0.5)
                index = 0
                while not slow:
                    tool, arguments = BYSTANDER_CALLS[index % len(BYSTANDER_CALLS)]
                    started = time.monotonic()
                    result = await second.call_tool(tool, arguments)
                    latencies.append(time.monotonic() - started)
                    assert not result.is_error, _text(result)
                    index += 1
                    await anyio.sleep(0.05)

    try:
        anyio.run(main)
    finally:
        service.close()
    (result, took) = slow[0]
    # the slow query ran to its timeout (not refused up front), and was stopped there
    assert result.is_error and "timeout" in _text(result), _text(result)
    assert 2.5 < took < 7.0
    assert len(latencies) >= 10
    p90 = statistics.quantiles(latencies, n=10)[-1]
    assert p90 <= 0.5, f"bystander p50 {statistics.median(latencies):.3f} s, p90 {p90:.3f} s"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "read_cypher",
            {"query": "RETURN 1 // " + "x" * 20_000},
            "query is 20,012 characters long; this server takes at most 20,000",
        ),
        (
            "read_cypher",
            {"query": "RETURN $p", "params": {"p": "x" * 70_000}},
            "params take 70,008 bytes as JSON; this server takes at most 65,536",
        ),
        (
            "search_values",
            {"key": "name", "text": "x" * 1_001},
            "text is 1,001 characters long; this server takes at most 1,000",
        ),
        ("search_values", {"key": "k" * 300, "text": "x"}, "key is 300 characters long"),
        (
            "get_schema",
            {"labels": [f"L{i}" for i in range(101)]},
            "labels names 101 labels; this server takes at most 100",
        ),
        (
            "read_cypher",
            {"query": "RETURN $p", "params": {"a`b": 1}},
            "params: parameter name 'a`b' is not an identifier",
        ),
        (
            "read_cypher",
            {"query": "MATCH (n) RETURN count(n)", "params": {"": 1}},
            "params: a parameter name is empty",
        ),
        (
            "read_cypher",
            {
                "query": "MATCH (n) RETURN count(n)",
                "params": {"x=1 MATCH (n) DETACH DELETE n //": 1},
            },
            "params: parameter name 'x=1 MATCH (n) DETACH DELETE n //' is not an identifier",
        ),
        (
            "read_cypher",
            {"query": "RETURN $s", "params": {"s": "Ann\x00 RETURN 1"}},
            "params: parameter 's': the string at $s holds a NUL character at offset 3",
        ),
        (
            "read_cypher",
            {"query": "RETURN $m", "params": {"m": {"k": [{"a`b": 1}]}}},
            "params: parameter 'm': the map key 'a`b' at $m.k[0] holds a backtick",
        ),
        (
            "read_cypher",
            {"query": "UNWIND range(1, $n) AS x RETURN count(x)", "params": {"n": 60_000_000}},
            "range(1, $n) with $n = 60,000,000 (60,000,000 values)",
        ),
        (
            "read_cypher",
            {"query": "CYPHER n=60000000 UNWIND range(1, $n) AS x RETURN count(x)"},
            "may not start with CYPHER",
        ),
        ("read_cypher", {"query": "MATCH (n)\x00 DETACH DELETE n"}, "NUL character at offset 9"),
    ],
)
def test_inputs_are_capped_and_checked_with_a_message_naming_them(
    town: GraphEngine, tool: str, arguments: dict[str, Any], message: str
) -> None:
    before = _counts(town)

    async def check(client: Client) -> None:
        started = time.monotonic()
        result = await client.call_tool(tool, arguments)
        assert result.is_error, result
        assert message in _text(result), _text(result)
        assert time.monotonic() - started < 1.0
        after = await client.call_tool("read_cypher", {"query": "RETURN 1 AS one"})
        assert not after.is_error

    _in_process(town, check)
    assert _counts(town) == before


def test_parameters_that_pass_run_as_reported(town: GraphEngine) -> None:
    injected = '" MATCH (n) DETACH DELETE n //'

    async def check(client: Client) -> None:
        result = await client.call_tool(
            "read_cypher",
            {
                "query": "MATCH (p:Person) WHERE p.born < $year RETURN p.name AS name, $s AS s "
                "ORDER BY name",
                "params": {"year": 1910, "s": injected},
            },
        )
        body = result.structured_content
        assert body is not None and not result.is_error
        assert body["rows"] == [["Ada Lovelace", injected], ["Grace Hopper", injected]]
        assert body["params"] == {"year": 1910, "s": injected}
        assert body["query"] == body["submitted"]

    before = _counts(town)
    _in_process(town, check)
    assert _counts(town) == before


def test_a_result_over_the_byte_budget_is_cut_with_a_note(town: GraphEngine) -> None:
    async def check(client: Client) -> None:
        result = await client.call_tool(
            "read_cypher",
            {"query": "UNWIND range(1, 500) AS i RETURN i, '" + "x" * 90 + "' AS pad"},
        )
        body = result.structured_content
        assert body is not None and not result.is_error
        assert body["total_rows"] == 500 and body["row_count"] == len(body["rows"]) < 500
        assert body["rows"][0] == [1, "x" * 90]
        note = f"{body['row_count']:,} of 500 rows shown; narrow the query"
        assert note in body["note"] and note in _text(result)
        # the text is a summary, not the rows a second time
        assert len(_text(result)) < 1_500

        small = await client.call_tool("read_cypher", {"query": "RETURN 1 AS one"})
        body = small.structured_content
        assert body is not None and body["note"] is None and body["total_rows"] == 1
        assert "1 row(s) of one" in _text(small) and "[1]" in _text(small)

    _in_process(town, check, result_bytes=10_000)


def test_an_engine_side_write_refusal_says_what_refused_it(
    town: GraphEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blind the tokenizer layer, so the write reaches the engine's read-only mode.
    import cypherturn.graph._base
    import cypherturn.graph._falkordb
    import cypherturn.mcp_server._service

    for module in (
        cypherturn.graph._base,
        cypherturn.graph._falkordb,
        cypherturn.mcp_server._service,
    ):
        monkeypatch.setattr(module, "find_write_clause", lambda _query: None)
    before = _counts(town)

    async def check(client: Client) -> None:
        result = await client.call_tool(
            "read_cypher", {"query": "MATCH (p:Person) DETACH DELETE p"}
        )
        assert result.is_error
        text = _text(result)
        assert "refused:  writes" not in text
        assert "the engine's read-only mode refused it as a write" in text
        assert "RO_QUERY is to be executed only on read-only queries" in text
        assert "unchanged" in text

    _in_process(town, check)
    assert _counts(town) == before


def test_reads_run_side_by_side_on_their_own_connections(town: GraphEngine) -> None:
    service = GraphService(town, connections=4, timeout_s=10)
    server = build_server(service, with_ask=False)
    took: list[float] = []

    async def main() -> None:
        async with Client(server) as client:

            async def one() -> None:
                started = time.monotonic()
                result = await client.call_tool(
                    "read_cypher", {"query": EXPENSIVE, "timeout_s": 1.5}
                )
                took.append(time.monotonic() - started)
                assert result.is_error and "timeout" in _text(result)

            started = time.monotonic()
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(one)
            took.append(time.monotonic() - started)

    try:
        anyio.run(main)
    finally:
        service.close()
    # three 1.5 s queries at once end together, not one after another (4.5 s)
    assert took[-1] < 4.0, took


def test_the_ask_prompt_prefix_is_warmed_on_a_pooled_connection(
    town: GraphEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    assert GraphService(town).warm() == 0  # no model, nothing to warm
    service = GraphService(town, model=load_model("smollm2-135m"), connections=1)
    try:
        assert service.warm() > 0
        # the prefix went to the disk cache too, and the connection went back to the pool
        assert any((tmp_path / "cache").rglob("*"))
        with service._borrow(time.monotonic() + 1) as (engine, _):
            assert engine.execute("RETURN 1 AS one").rows == [[1]]
    finally:
        service.close()
