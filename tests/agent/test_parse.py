"""Text-format action parsing: tolerant of fences, prose and reasoning; clear errors otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cypherturn.agent import (
    ActionCall,
    ParseFailure,
    parse_action,
    salvage_runaway,
    split_reasoning,
)
from cypherturn.records import Action

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "parse_cases.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_parse_case(case: dict[str, Any]) -> None:
    parsed = parse_action(case["reply"], ended=case.get("ended", False))
    if "error" in case:
        assert isinstance(parsed, ParseFailure)
        assert case["error"] in parsed.message
    else:
        assert parsed == ActionCall(
            action=Action(case["action"]),
            payload=case["payload"],
            repaired=case.get("repaired", False),
        )


def test_split_reasoning_returns_both_parts() -> None:
    answer, reasoning = split_reasoning("<think>plan</think> the answer")
    assert answer == "the answer"
    assert reasoning == "<think>plan</think>"


RUNAWAY = (
    '{"action": "EXECUTE_CYPHER", "input": "MATCH (i:Invoice) WHERE i.status = \'paid\' '
    "RETURN DISTINCT i.name AS name, coalesce(i.due, i.issued) AS due, i.status AS status, "
    "coalesce(i.due, i.issued) AS due, i.status AS status, coalesce(i.due, i.iss"
)


@pytest.mark.parametrize(
    ("reply", "payload"),
    [
        (
            RUNAWAY,
            "MATCH (i:Invoice) WHERE i.status = 'paid' RETURN DISTINCT i.name AS name, "
            "coalesce(i.due, i.issued) AS due, i.status AS status",
        ),
        (
            '```json\n{"action": "SUBMIT_ANSWER", "input": "MATCH (n) RETURN n.a AS a, n.a AS a, n',
            "MATCH (n) RETURN n.a AS a",
        ),
        # a WITH list that ran away would leave a query without RETURN
        ('{"action": "SUBMIT_ANSWER", "input": "MATCH (n) WITH n.a AS a, n.a AS a, n', None),
        # the repeat is in a list, not in the projection: the query would be truncated
        (
            '{"action": "EXECUTE_CYPHER", "input": "MATCH (n) WHERE n.name IN [\'a\', \'a\', \'a',
            None,
        ),
        # a projection that was cut before repeating: truncated, not a runaway
        ('{"action": "EXECUTE_CYPHER", "input": "MATCH (n) RETURN n.a AS a, n.b AS b, n.c', None),
        # raw newlines in the string (llama.cpp's JSON grammar allows them), other payload keys
        (
            '{"action": "EXECUTE_CYPHER", "query": "MATCH (i:Invoice)\nRETURN i.a AS a, i.a AS a, i.b',
            "MATCH (i:Invoice)\nRETURN i.a AS a",
        ),
        # a \\u escape the cut left unfinished
        ('{"action": "EXECUTE_CYPHER", "input": "RETURN 1 AS a, 1 AS a, \\u00', "RETURN 1 AS a"),
        # not a Cypher action
        ('{"action": "ASK_USER", "input": "RETURN n.a, n.a, n.a', None),
        # a closed object is the parser's to read, not a runaway
        ('{"action": "EXECUTE_CYPHER", "input": "MATCH (n) RETURN n.a, n.a, n.b"}', None),
    ],
)
def test_salvage_runaway(reply: str, payload: str | None) -> None:
    salvaged = salvage_runaway(reply)
    if payload is None:
        assert salvaged is None
    else:
        assert salvaged == ActionCall(
            action=salvaged.action if salvaged else Action.EXECUTE_CYPHER,
            payload=payload,
            repaired=True,
        )
