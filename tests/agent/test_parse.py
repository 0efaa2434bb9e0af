"""Text-format action parsing: tolerant of fences, prose and reasoning; clear errors otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cypherturn.agent import ActionCall, ParseFailure, parse_action, split_reasoning
from cypherturn.records import Action

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "parse_cases.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_parse_case(case: dict[str, Any]) -> None:
    parsed = parse_action(case["reply"])
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
