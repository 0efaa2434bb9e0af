"""`cypherturn mcp` driven by the official MCP SDK's own client: stdio, streamable HTTP, in-process.

Every test runs against the real embedded FalkorDB. The stdio and HTTP tests
spawn the real command line (``python -m cypherturn mcp``) as a user's
assistant would; the in-process tests connect the SDK's ``Client`` to the same
server object, which is cheaper, for the argument and error cases.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from cypherturn.graph import GraphEngine
from cypherturn.mcp_server import DEFAULT_RESULT_BYTES, TOOL_NAMES, GraphService, build_server
from cypherturn.models import ReplayChatModel

ASKED = "MATCH (p:Person) RETURN count(p) AS people"
# 10,000 rows of about 330 bytes each: over 3 MB, far inside the row cap
WIDE_ROWS = (
    "UNWIND range(1, 10000) AS i "
    "RETURN i, i * 2 AS double, '" + "w" * 300 + "' + toString(i) AS wide"
)


def _counts(engine: GraphEngine) -> list[list[Any]]:
    return engine.execute(
        "MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r) AS rels"
    ).rows


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _replay(tmp_path: Path, *responses: str) -> str:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(list(responses)))
    return f"replay:{path}"


def _server_args(engine: GraphEngine, model: str) -> list[str]:
    return ["-m", "cypherturn", "mcp", "--graph", engine.graph, "--model", model]


def _child_env(home: Path) -> dict[str, str]:
    # the stdio client passes only a safe subset of the environment, so name what the server needs
    return {"CYPHERTURN_HOME": str(home), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}


async def _exercise(session: ClientSession, engine: GraphEngine) -> None:
    """The same conversation over any transport: every tool, a refused write, bad arguments."""
    before = _counts(engine)
    listed = await session.list_tools()
    assert sorted(t.name for t in listed.tools) == sorted(TOOL_NAMES)
    assert all(t.annotations is not None and t.annotations.read_only_hint for t in listed.tools)
    assert all(t.output_schema is not None for t in listed.tools)

    schema = await session.call_tool("get_schema", {})
    assert not schema.is_error and schema.structured_content is not None
    assert {x["label"] for x in schema.structured_content["labels"]} == {
        "Person",
        "City",
        "Company",
    }

    projected = await session.call_tool("get_schema", {"labels": ["Company"]})
    body = projected.structured_content
    assert body is not None and body["projected"] is True
    assert [x["label"] for x in body["labels"]] == ["Company"]
    assert body["patterns"] == [{"source": "Person", "type": "WORKS_AT", "target": "Company"}]
    assert [r["type"] for r in body["relationship_types"]] == ["WORKS_AT"]
    assert "LIVES_IN" not in body["text"] and "Company" in body["text"]

    search = await session.call_tool("search_values", {"key": "name", "text": "london"})
    found = search.structured_content
    assert found is not None
    city = next(m for m in found["matches"] if m["owner"] == "City")
    assert city["values"][0] == "London" and city["exact"] is False

    read = await session.call_tool(
        "read_cypher",
        {
            "query": "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'london'}) "
            "RETURN p.name AS name ORDER BY name"
        },
    )
    rows = read.structured_content
    assert not read.is_error and rows is not None
    assert rows["rows"] == [["Ada Lovelace"], ["Alan Turing"]]
    assert [r["code"] for r in rows["repairs"]] == ["value_not_found"]
    assert "'London'" in rows["query"] and "'london'" in rows["submitted"]

    write = await session.call_tool("read_cypher", {"query": "MATCH (p:Person) DETACH DELETE p"})
    assert write.is_error and "DETACH DELETE" in _text(write) and "unchanged" in _text(write)

    bad = await session.call_tool("search_values", {"key": "name"})
    assert bad.is_error and "text" in _text(bad)

    # 10,000 wide rows are several MB: cut to the byte budget, readable, and said so
    wide = await session.call_tool("read_cypher", {"query": WIDE_ROWS})
    body = wide.structured_content
    assert not wide.is_error and body is not None
    assert body["total_rows"] == 10_000 and 0 < body["row_count"] < 10_000
    assert len(body["rows"]) == body["row_count"] and body["rows"][0][0] == 1
    assert f"{body['row_count']:,} of 10,000 rows shown; narrow the query" in body["note"]
    assert body["note"] in _text(wide) and len(_text(wide)) < 3_000
    assert len(json.dumps(body["rows"], separators=(",", ":")).encode()) <= DEFAULT_RESULT_BYTES

    asked = await session.call_tool("ask", {"question": "How many people are there?"})
    answer = asked.structured_content
    assert not asked.is_error and answer is not None
    assert answer["query"] == ASKED and answer["rows"] == [[3]] and answer["success"] is True
    assert answer["strategy"] == "ras+" and answer["attempts"][0]["outcome"] == "ok"

    assert _counts(engine) == before


def test_stdio_server_spawned_by_the_sdk_client(
    town: GraphEngine, tmp_path: Path, cypherturn_home: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=_server_args(town, _replay(tmp_path, ASKED)),
        env=_child_env(cypherturn_home),
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "cypherturn"
            await _exercise(session, town)

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http_server(town: GraphEngine, tmp_path: Path, cypherturn_home: Path) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            *_server_args(town, _replay(tmp_path, ASKED)),
            "--http",
            "--port",
            str(port),
        ],
        env={**os.environ, "CYPHERTURN_HOME": str(cypherturn_home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()[1]
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the HTTP server did not start within 60 s"
            time.sleep(0.2)

        async def main() -> None:
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await _exercise(session, town)

        anyio.run(main)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/mcp" in err


def _in_process(
    engine: GraphEngine, check: Callable[[Client], Awaitable[None]], **options: Any
) -> None:
    service = GraphService(engine, **options)
    server = build_server(service, with_ask="model" in options)

    async def main() -> None:
        async with Client(server) as client:
            await check(client)

    try:
        anyio.run(main)
    finally:
        service.close()


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("read_cypher", {}, "query"),
        ("read_cypher", {"query": 5}, "query"),
        ("read_cypher", {"query": "   "}, "must not be empty"),
        ("read_cypher", {"query": "MATCH (n) RETURN n", "row_cap": 0}, "row_cap"),
        ("read_cypher", {"query": "MATCH (n) RETURN n", "row_cap": 10_000}, "at most"),
        ("read_cypher", {"query": "MATCH (n RETURN n"}, "syntax"),
        ("read_cypher", {"query": "CREATE (:Person {name: 'Eve'})"}, "CREATE"),
        ("read_cypher", {"query": "MATCH (p) SET p.x = 1 RETURN p"}, "SET"),
        ("search_values", {"key": "nmae", "text": "Ada"}, "did you mean 'name'"),
        ("search_values", {"key": "name", "text": "Ada", "label": "Planet"}, "no label"),
        ("search_values", {"key": "born", "text": "1815", "label": "City"}, "held by Person"),
        ("search_values", {"key": "name", "text": "Ada", "limit": 0}, "limit"),
        ("get_schema", {"labels": ["Persn"]}, "no label 'Persn'"),
        ("get_schema", {"labels": "Person"}, "labels"),
        ("drop_graph", {}, "drop_graph"),
    ],
)
def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(
    town: GraphEngine, tool: str, arguments: dict[str, Any], message: str
) -> None:
    before = _counts(town)

    async def check(client: Client) -> None:
        result = await client.call_tool(tool, arguments)
        assert result.is_error, result
        assert message in _text(result)
        after = await client.call_tool("get_schema", {"labels": ["City"]})
        assert not after.is_error

    _in_process(town, check, row_cap=100)
    assert _counts(town) == before


def test_read_cypher_reports_findings_limits_and_reversed_arrow_repair(town: GraphEngine) -> None:
    async def check(client: Client) -> None:
        flipped = await client.call_tool(
            "read_cypher", {"query": "MATCH (c:City)-[:LIVES_IN]->(p:Person) RETURN count(p) AS n"}
        )
        body = flipped.structured_content
        assert body is not None and body["rows"] == [[3]]
        assert [r["code"] for r in body["repairs"]] == ["reversed_direction"]

        unrepaired = await client.call_tool(
            "read_cypher",
            {
                "query": "MATCH (c:City)-[:LIVES_IN]->(p:Person) RETURN count(p) AS n",
                "repair": False,
            },
        )
        plain = unrepaired.structured_content
        assert plain is not None and plain["rows"] == [[0]] and plain["repairs"] == []
        assert [f["code"] for f in plain["findings"]] == ["reversed_direction"]

        capped = await client.call_tool(
            "read_cypher",
            {
                "query": "MATCH (p:Person) WHERE p.born > $year RETURN p.name",
                "params": {"year": 1800},
                "row_cap": 2,
            },
        )
        rows = capped.structured_content
        assert rows is not None and rows["row_count"] == 2 and rows["truncated"] is True

        # a count of 0 answers nothing, like no rows: the literal is checked and repaired
        counted = await client.call_tool(
            "read_cypher",
            {
                "query": "MATCH (p:Person)-[:LIVES_IN]->(:City {name: 'LONDON'}) RETURN count(p) AS n"
            },
        )
        body = counted.structured_content
        assert body is not None and body["rows"] == [[2]], body
        assert [r["code"] for r in body["repairs"]] == ["value_not_found"]
        assert "'London'" in body["query"] and "'LONDON'" in body["submitted"]
        missing = await client.call_tool(
            "read_cypher",
            {"query": "MATCH (c:City {name: 'Paris'}) RETURN count(c) AS n", "repair": False},
        )
        body = missing.structured_content
        assert body is not None and body["rows"] == [[0]] and body["repairs"] == []
        assert [f["code"] for f in body["findings"]] == ["value_not_found"]

    _in_process(town, check, row_cap=100)


def test_a_server_without_a_model_has_no_ask_tool(town: GraphEngine) -> None:
    async def check(client: Client) -> None:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "ask" not in names and "read_cypher" in names

    _in_process(town, check)


def test_ask_reports_every_attempt_of_the_grounded_strategy(town: GraphEngine) -> None:
    model = ReplayChatModel(["MATCH (p:Person RETURN p", ASKED])

    async def check(client: Client) -> None:
        result = await client.call_tool("ask", {"question": "How many people?", "budget": 3})
        body = result.structured_content
        assert body is not None and body["success"] is True and body["rows"] == [[3]]
        # the verified candidate of attempt 2 ends the loop
        assert [a["outcome"] for a in body["attempts"]] == ["error", "ok"]
        assert body["attempts"][0]["error_class"] == "syntax"
        assert body["selected_attempt"] == 2 and body["budget"] == 3

        exhausted = await client.call_tool("ask", {"question": "Again?"})
        assert exhausted.is_error and "replay" in _text(exhausted).lower()

    _in_process(town, check, model=model)


def test_command_line_errors_are_one_message(tmp_path: Path, cypherturn_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cypherturn", "mcp", "--graph", "atlantis", "--no-ask"],
        capture_output=True,
        text=True,
        env={**os.environ, "CYPHERTURN_HOME": str(cypherturn_home)},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert "not a known world" in done.stderr and "Traceback" not in done.stderr
