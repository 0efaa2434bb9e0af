"""Native tool calling: the five tool definitions and reading tool calls back as actions."""

from __future__ import annotations

import json

import pytest

from cypherturn.agent import ActionCall, ParseFailure, parse_tool_call, tool_definitions
from cypherturn.records import Action


def test_one_tool_per_action() -> None:
    tools = [t.openai() for t in tool_definitions()]
    assert [t["function"]["name"] for t in tools] == [a.name for a in Action]
    search = next(t for t in tools if t["function"]["name"] == "SEARCH_VALUES")
    assert search["function"]["parameters"]["required"] == ["label", "property", "query"]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "EXECUTE_CYPHER",
            '{"query": "RETURN 1"}',
            ActionCall(action=Action.EXECUTE_CYPHER, payload="RETURN 1"),
        ),
        ("inspect_schema", "", ActionCall(action=Action.INSPECT_SCHEMA)),
        (
            "ask-user",
            {"question": "Which year?"},
            ActionCall(action=Action.ASK_USER, payload="Which year?"),
        ),
        (
            "SUBMIT_ANSWER",
            '{"query": "MATCH (n) RETURN n"}',
            ActionCall(action=Action.SUBMIT_ANSWER, payload="MATCH (n) RETURN n"),
        ),
        (
            "SEARCH_VALUES",
            '{"label": "Hero", "property": "name", "query": "ada"}',
            ActionCall(
                action=Action.SEARCH_VALUES,
                payload=json.dumps({"label": "Hero", "property": "name", "query": "ada"}),
            ),
        ),
    ],
)
def test_tool_calls_become_actions(name: str, arguments: object, expected: ActionCall) -> None:
    assert parse_tool_call(name, arguments) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("DROP_GRAPH", "{}", "Unknown tool"),
        ("EXECUTE_CYPHER", '{"query": ', "not valid JSON"),
        ("EXECUTE_CYPHER", "[1]", "must be a JSON object"),
        ("SUBMIT_ANSWER", '{"query": ""}', 'needs a non-empty string "query"'),
    ],
)
def test_bad_tool_calls_are_observations(name: str, arguments: str, message: str) -> None:
    parsed = parse_tool_call(name, arguments)
    assert isinstance(parsed, ParseFailure) and message in parsed.message
